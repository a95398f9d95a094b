//! The whole loop on the pytest fixture with two real bugs: the tester repairs them through
//! the (stubbed) model in two fixes, judges the gate on a full run, posts `test_result`; the
//! QARUN task unblocks and the executor records its results in shared memory. The TEST task is
//! created held for a person's approval: the tester gets it only once approved, and the
//! person's words reach the model's prompt and the report. Also: a fix that regressed is
//! rolled back, and a stagnating failure stops after two attempts.

use huddle_sdk::wire::{AnswerRequest, Decision, GateKind, GateRequest, NewTask, TaskStatus};
use huddle_tests::llm::projects::{
    pytest_project, SHOUT_BUG, SHOUT_OK, STRINGS_PY, WHISPER_BUG, WHISPER_OK,
};
use huddle_tests::llm::stub::{fix, tool_call_fix};
use huddle_tests::llm::team::{settings, team};
use huddle_tests::llm::LlmStub;
use serde_json::Value;

fn task(id: &str, blocked_by: &[&str], description: &str) -> NewTask {
    NewTask {
        id: Some(id.into()),
        subject: format!("{id} on the fixture"),
        description: Some(description.into()),
        blocked_by: blocked_by.iter().map(|s| s.to_string()).collect(),
        ..NewTask::default()
    }
}

/// Reports of every run in the project, oldest first.
fn runs(root: &std::path::Path) -> Vec<Value> {
    let mut reports: Vec<Value> = std::fs::read_dir(root.join(".huddle/runs"))
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("report.json")).ok())
        .map(|b| serde_json::from_slice(&b).unwrap())
        .collect();
    reports.sort_by(|a, b| {
        a["created"]
            .as_f64()
            .partial_cmp(&b["created"].as_f64())
            .unwrap()
    });
    reports
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_fixes_two_bugs_the_gate_passes_on_a_full_run_and_the_executor_records_results() {
    let project = pytest_project(true, true);
    let stub = LlmStub::start(
        "sk-stub-key-0123456789abcdef",
        vec![
            fix(&[("pkg/strings.py", SHOUT_BUG, SHOUT_OK)]),
            tool_call_fix(&[("pkg/strings.py", WHISPER_BUG, WHISPER_OK)]),
        ],
    )
    .await;
    let t = team().await;
    let gated = NewTask {
        gate: Some(GateRequest {
            question: "May the tester change pkg/strings.py?".into(),
            kind: GateKind::Approval,
            person_only: false,
            deadline: None,
            on_deadline: None,
        }),
        // Both complete only on evidence the daemon checks in its own test history.
        metadata: Some(serde_json::json!({"requireEvidence": true})),
        ..task("TEST-001", &[], "make the string helpers pass")
    };
    let qarun = NewTask {
        metadata: Some(serde_json::json!({"requireEvidence": true})),
        ..task("QARUN-001", &["TEST-001"], "layer: L2")
    };
    let created = t.coord.create_tasks(&[gated, qarun]).await.unwrap();
    let question = created[0].blocked_by[0].clone();
    t.start_tester(settings(&project.root, Some(&stub)));
    t.start_executor(settings(&project.root, Some(&stub)));
    // Created held, so the waiting tester does not get it before the decision.
    let words = "Yes, but keep the public names in pkg/strings.py unchanged.";
    t.coord
        .decide(
            &question,
            &AnswerRequest {
                answer: Some(words.into()),
                decision: Some(Decision::Approve),
            },
        )
        .await
        .unwrap();

    let test = t.closed("TEST-001").await;
    assert_eq!(
        test.status,
        TaskStatus::Completed,
        "{:?}",
        test.failure_reason
    );
    assert_eq!(project.read("pkg/strings.py"), STRINGS_PY);
    let checked = |task: &huddle_sdk::wire::Task| {
        task.result
            .as_ref()
            .map(|r| r["evidence"]["checked"]["by"].clone())
    };
    assert_eq!(
        checked(&test),
        Some(serde_json::json!("huddled")),
        "{:?}",
        test.result
    );
    let result = t.one("test_result").await;
    assert_eq!(result.from, "tester");
    let d = &result.data;
    assert_eq!(
        (
            d["passRate"].as_f64(),
            d["total"].as_u64(),
            d["passed"].as_u64(),
            d["failed"].as_u64()
        ),
        (Some(100.0), Some(7), Some(7), Some(0)),
        "{d:#}"
    );
    assert_eq!(d["qualityGatePassed"], true);
    assert_eq!(d["framework"], "pytest");
    assert_eq!(d["iterations"], 3, "two fixes, then the verdict");
    assert_eq!(d["criticalFailures"], serde_json::json!([]));
    let history = d["strategyHistory"].as_array().unwrap();
    assert_eq!(history[0]["strategy"], "conservative");
    assert_eq!(history[1]["strategy"], "conservative");
    let summary = d["summary"].as_str().unwrap();
    for part in [
        "PASSED",
        "### Summary",
        "### Decided before it began",
        words,
        "### Strategy history",
        "### Remaining failures by severity",
    ] {
        assert!(summary.contains(part), "{summary}");
    }
    assert_eq!(d["gates"][0]["id"], question.as_str(), "{d:#}");
    assert_eq!(d["gates"][0]["decision"], "approve");
    let progress = t.fix_progress().await;
    assert_eq!(progress.len(), 2);
    assert_eq!(progress[0].data["iteration"], 1);
    assert_eq!(progress[0].data["maxIterations"], 10);

    // Two model calls: JSON schema asked for, the failure and the files shown, the key sent.
    let requests = stub.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0]["model"], "stub-model");
    assert_eq!(requests[0]["response_format"]["type"], "json_schema");
    let first = stub.user_message(0);
    assert!(
        first.contains("tests/test_strings.py::test_shout")
            && first.contains("--- pkg/strings.py (editable) ---"),
        "{first}"
    );
    // The person's decision, in their words, is part of what the model is asked.
    assert!(
        first.contains("A person decided before this task began") && first.contains(words),
        "{first}"
    );

    // Iterations ran the affected tests; the verdict came from a full run.
    let reports = runs(&project.root);
    assert!(
        reports.iter().any(|r| r["summary"]["total"] == 2),
        "an affected run of test_strings only"
    );
    let last_tester_run = reports
        .iter()
        .rev()
        .find(|r| r["summary"]["total"] == 7)
        .unwrap();
    assert_eq!(last_tester_run["summary"]["passed"], 7);

    // The QARUN task unblocked; the executor recorded its results.
    let qarun = t.closed("QARUN-001").await;
    assert_eq!(
        qarun.status,
        TaskStatus::Completed,
        "{:?}",
        qarun.failure_reason
    );
    assert_eq!(
        checked(&qarun),
        Some(serde_json::json!("huddled")),
        "{:?}",
        qarun.result
    );
    let results = t.coord.memory_at("/execution_results").await.unwrap();
    let l2 = &results["L2"];
    assert_eq!(l2["layer"], "L2");
    assert_eq!(l2["framework"], "pytest");
    assert_eq!(l2["iterations"], 1);
    assert_eq!(l2["passRate"], 100.0);
    assert_eq!(
        (l2["testsPassed"].as_u64(), l2["testsFailed"].as_u64()),
        (Some(7), Some(0))
    );
    assert_eq!(l2["allPassed"], true);
    assert_eq!(l2["maxIterationsReached"], false);
    assert!(l2.get("coverage").is_some());
    assert_eq!(results["pass_rate"], 100.0);
    assert_eq!(
        stub.requests().len(),
        2,
        "the executor had nothing to repair"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fix_that_regresses_is_rolled_back_before_a_surgical_fix() {
    let project = pytest_project(true, true);
    let calc = project.read("pkg/calc.py");
    let stub = LlmStub::start(
        "sk-stub",
        vec![
            fix(&[("pkg/strings.py", SHOUT_BUG, SHOUT_OK)]),
            // Breaks every add test: a drop of far more than ten points.
            fix(&[("pkg/calc.py", "return a + b", "return a - b")]),
            fix(&[("pkg/strings.py", WHISPER_BUG, WHISPER_OK)]),
        ],
    )
    .await;
    let t = team().await;
    t.coord
        .create_task(&task("TEST-001", &[], ""))
        .await
        .unwrap();
    t.start_tester(settings(&project.root, Some(&stub)));

    let test = t.closed("TEST-001").await;
    assert_eq!(
        test.status,
        TaskStatus::Completed,
        "{:?}",
        test.failure_reason
    );
    assert_eq!(
        project.read("pkg/calc.py"),
        calc,
        "the regressing fix was rolled back"
    );
    assert_eq!(project.read("pkg/strings.py"), STRINGS_PY);
    let progress = t.fix_progress().await;
    let surgical = progress
        .iter()
        .find(|m| m.data["strategy"] == "surgical")
        .expect("a surgical iteration");
    assert!(
        surgical.data["note"]
            .as_str()
            .unwrap()
            .contains("rolled back the last fix"),
        "{:#}",
        surgical.data
    );
    assert!(
        stub.user_message(2).contains("rolled back"),
        "the model is told"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_that_stays_the_same_across_two_fixes_stops_with_fix_required() {
    let project = pytest_project(true, false);
    let stub = LlmStub::start(
        "sk-stub",
        vec![
            fix(&[(
                "pkg/strings.py",
                "def shout(text):\n",
                "# first attempt\ndef shout(text):\n",
            )]),
            fix(&[(
                "pkg/strings.py",
                "def whisper(text):\n",
                "# second attempt\ndef whisper(text):\n",
            )]),
            fix(&[("pkg/strings.py", SHOUT_BUG, SHOUT_OK)]),
        ],
    )
    .await;
    let t = team().await;
    t.coord
        .create_task(&task("TEST-001", &[], ""))
        .await
        .unwrap();
    t.start_tester(settings(&project.root, Some(&stub)));

    let test = t.closed("TEST-001").await;
    assert_eq!(test.status, TaskStatus::Failed);
    assert!(
        test.failure_reason
            .as_deref()
            .unwrap()
            .contains("stagnation"),
        "{:?}",
        test.failure_reason
    );
    assert_eq!(stub.requests().len(), 2, "stopped after two attempts");
    let required = t.one("fix_required").await;
    assert_eq!(required.data["category"], "stagnation");
    assert_eq!(
        required.data["tests"],
        serde_json::json!(["tests/test_strings.py::test_shout"])
    );
    assert_eq!(required.data["taskId"], "TEST-001");
    let result = t.one("test_result").await;
    assert_eq!(result.data["qualityGatePassed"], false);
    assert_eq!(result.data["stopReason"]["kind"], "stagnation");
}

/// A team that asks before giving up (`questions.askBelowGate`): the tester, stopped below the
/// gate, asks a person and keeps its task while it waits; the person's approval completes the
/// task below the gate, and the report says who accepted it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn below_the_gate_the_tester_asks_a_person_and_completes_on_approval() {
    let project = pytest_project(true, false);
    let stub = LlmStub::start(
        "sk-stub",
        vec![
            fix(&[(
                "pkg/strings.py",
                "def shout(text):\n",
                "# first attempt\ndef shout(text):\n",
            )]),
            fix(&[(
                "pkg/strings.py",
                "def whisper(text):\n",
                "# second attempt\ndef whisper(text):\n",
            )]),
        ],
    )
    .await;
    let t = team().await;
    huddle_tests::http::Api::new(&t.daemon.url, huddle_tests::ADMIN)
        .put(
            "/v1/teams/qa/settings",
            serde_json::json!({"questions": {"askBelowGate": true}}),
        )
        .await
        .expect_status(200);
    t.coord
        .create_task(&task("TEST-001", &[], ""))
        .await
        .unwrap();
    t.start_tester(settings(&project.root, Some(&stub)));

    let query = huddle_sdk::client::TaskQuery {
        owner: Some("human".into()),
        status: Some(TaskStatus::Pending),
        ..Default::default()
    };
    huddle_tests::eventually(180, "the tester asks a person", || async {
        !t.coord.list_tasks(&query).await.unwrap().tasks.is_empty()
    })
    .await;
    let question = t.coord.list_tasks(&query).await.unwrap().tasks.remove(0);
    assert_eq!(question.metadata["gate"]["for"], "TEST-001");
    assert_eq!(question.metadata["gate"]["asker"], "tester");
    assert!(
        question.description.contains("below its quality gate"),
        "{}",
        question.description
    );
    let waiting = t.coord.get_task("TEST-001").await.unwrap();
    assert_eq!(
        waiting.status,
        TaskStatus::InProgress,
        "kept while it waits"
    );
    t.coord
        .decide(
            &question.id,
            &AnswerRequest {
                answer: Some("Ship it; shout is tracked in BUG-12.".into()),
                decision: Some(Decision::Approve),
            },
        )
        .await
        .unwrap();

    let test = t.closed("TEST-001").await;
    assert_eq!(
        test.status,
        TaskStatus::Completed,
        "{:?}",
        test.failure_reason
    );
    let result = test.result.expect("a result");
    assert_eq!(result["qualityGatePassed"], false);
    assert_eq!(result["acceptedBelowGate"]["id"], question.id.as_str());
    assert_eq!(result["acceptedBelowGate"]["answeredBy"], "coordinator");
    let verdict = t.one("test_result").await;
    assert!(
        verdict.summary.contains("not met, accepted by coordinator"),
        "{}",
        verdict.summary
    );
    assert_eq!(
        stub.requests().len(),
        2,
        "no more model calls while waiting"
    );
}
