//! The daemon checks a completion's evidence in its own test history: a task that requires it
//! completes only with a run posted by its holder, for it, on the tree the result names, at or
//! above its gate, with its target tests passing — refused `409 evidence_required` or
//! `evidence_mismatch` otherwise, over REST (one and many; MCP in `tests/tests/mcp/evidence.rs`) —
//! and held to the claimant's first run for the task (pass-to-pass, acceptance tests). Both
//! backends.

use huddle_tests::{Api, TestDaemon};
use serde_json::{json, Value};

/// 40 tests of which `failing` fail, in two files; posted by `api` for `task`.
async fn post_run(api: &Api, task: Option<&str>, tree: &str, failing: &[&str]) -> i64 {
    let outcomes: Vec<Value> = (0..40)
        .map(|n| {
            let file = if n < 20 {
                "tests/test_calc.py"
            } else {
                "tests/test_strs.py"
            };
            let nodeid = match n {
                39 => "tests/test_strs.py::test_shout".to_string(),
                n => format!("{file}::test_{n:02}"),
            };
            let outcome = if failing.contains(&nodeid.as_str()) {
                "failed"
            } else {
                "passed"
            };
            json!({"nodeid": nodeid, "outcome": outcome})
        })
        .collect();
    let mut run = json!({"project": "calc", "tree": tree, "outcomes": outcomes});
    if let Some(task) = task {
        run["task"] = json!(task);
    }
    api.post(&api.t("/history/runs"), run)
        .await
        .expect_status(201)
        .body["id"]
        .as_i64()
        .unwrap()
}

fn evidence(run: i64, tree: &str) -> Value {
    json!({"evidence": {"runId": run, "project": "calc", "tree": tree}})
}

async fn complete(api: &Api, id: &str, result: Value) -> huddle_tests::http::Reply {
    api.post(
        &api.t(&format!("/tasks/{id}/complete")),
        json!({ "result": result }),
    )
    .await
}

#[tokio::test]
async fn a_task_that_requires_evidence_completes_only_on_a_run_that_proves_it() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let t = d.agent("qa", "tester-1", "tester").await;
    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-001", "subject": "fix shout",
               "metadata": {"requireEvidence": true, "targets": ["tests/test_strs.py"]}}),
    )
    .await
    .expect_status(201);
    assert_eq!(t.claim(json!({})).await.unwrap()["id"], "TEST-001");

    // Nothing, or a mark of the client's own making: required.
    complete(&t, "TEST-001", json!({"passRate": 100}))
        .await
        .expect_error(409, "evidence_required");
    complete(
        &t,
        "TEST-001",
        json!({"evidence": {"checked": {"by": "huddled"}}}),
    )
    .await
    .expect_error(409, "evidence_required");

    // Runs that do not prove it, each named in the refusal.
    let other_task = post_run(&t, Some("TEST-002"), "tree-a", &[]).await;
    let by_other = post_run(&c, Some("TEST-001"), "tree-a", &[]).await;
    let below_gate = post_run(
        &t,
        Some("TEST-001"),
        "tree-a",
        &[
            "tests/test_calc.py::test_01",
            "tests/test_calc.py::test_02",
            "tests/test_calc.py::test_03",
        ],
    )
    .await;
    // 39 of 40 pass (97.5 %, over the 95 % gate) but the target's test_shout fails.
    let target_fails = post_run(
        &t,
        Some("TEST-001"),
        "tree-a",
        &["tests/test_strs.py::test_shout"],
    )
    .await;
    let good = post_run(&t, Some("TEST-001"), "tree-b", &[]).await;
    for (run, tree, detail) in [
        (other_task, "tree-a", "runTask"),
        (by_other, "tree-a", "postedBy"),
        (below_gate, "tree-a", "gate"),
        (target_fails, "tree-a", "notPassing"),
        (good, "tree-a", "resultTree"),
        (good + 1000, "tree-b", "project"),
    ] {
        let refused = complete(&t, "TEST-001", evidence(run, tree))
            .await
            .expect_error(409, "evidence_mismatch");
        assert!(
            refused.body["error"]["details"].get(detail).is_some(),
            "{detail}: {}",
            refused.body
        );
    }
    let task = t.get(&t.t("/tasks/TEST-001")).await.expect_status(200);
    assert_eq!(task.body["status"], "in_progress");

    let done = complete(&t, "TEST-001", evidence(good, "tree-b"))
        .await
        .expect_status(200);
    assert_eq!(done.body["status"], "completed");
    assert_eq!(done.body["result"]["evidence"]["checked"]["by"], "huddled");
    assert_eq!(done.body["result"]["evidence"]["runId"], good);
}

#[tokio::test]
async fn prefixes_require_evidence_and_other_tasks_complete_as_before() {
    let d = TestDaemon::start_with(|s| s.tasks.evidence_prefixes = vec!["QARUN".into()]).await;
    let c = d.team("qa").await;
    let x = d.agent("qa", "executor-1", "executor").await;
    let t = d.agent("qa", "tester-1", "tester").await;
    c.post(
        &c.t("/tasks"),
        json!([{"id": "QARUN-001", "subject": "run the suite"},
               {"id": "TEST-001", "subject": "unchecked"}]),
    )
    .await
    .expect_status(201);
    assert_eq!(x.claim(json!({})).await.unwrap()["id"], "QARUN-001");
    assert_eq!(t.claim(json!({})).await.unwrap()["id"], "TEST-001");

    // A coordinator completing several: one without evidence refuses them all.
    c.post(
        &c.t("/tasks/complete"),
        json!({"tasks": [{"id": "TEST-001"}, {"id": "QARUN-001"}]}),
    )
    .await
    .expect_error(409, "evidence_required");
    let unchecked = c.get(&c.t("/tasks/TEST-001")).await.expect_status(200);
    assert_eq!(unchecked.body["status"], "in_progress");

    let run = post_run(&x, Some("QARUN-001"), "t1", &[]).await;
    // The holder's run proves it, whoever completes.
    let done = c
        .post(
            &c.t("/tasks/complete"),
            json!({"tasks": [{"id": "TEST-001"}, {"id": "QARUN-001", "result": evidence(run, "t1")}]}),
        )
        .await
        .expect_status(200);
    assert_eq!(
        done.body["tasks"][1]["result"]["evidence"]["checked"]["by"],
        "huddled"
    );
    // A task that requires nothing keeps a result's evidence as sent, unmarked.
    assert_eq!(done.body["tasks"][0]["status"], "completed");
}

/// Posts a run of `outcomes` (`(nodeid, outcome)`) by `api` for `task`.
async fn post_outcomes(api: &Api, task: &str, tree: &str, outcomes: &[(&str, &str)]) -> i64 {
    let outcomes: Vec<Value> = outcomes
        .iter()
        .map(|(n, o)| json!({"nodeid": n, "outcome": o}))
        .collect();
    api.post(
        &api.t("/history/runs"),
        json!({"project": "calc", "tree": tree, "task": task, "outcomes": outcomes}),
    )
    .await
    .expect_status(201)
    .body["id"]
        .as_i64()
        .unwrap()
}

#[tokio::test]
async fn evidence_is_held_to_the_first_run_and_needs_passing_acceptance_tests() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let t = d.agent("qa", "tester-1", "tester").await;
    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-001", "subject": "fix shout",
               "metadata": {"requireEvidence": true,
                            "acceptance": {"ref": "acceptance", "paths": ["tests/acceptance"]}}}),
    )
    .await
    .expect_status(201);
    assert_eq!(t.claim(json!({})).await.unwrap()["id"], "TEST-001");
    let (ok, shout, hidden) = (
        "tests/test_a.py::test_ok",
        "tests/test_a.py::test_shout",
        "tests/acceptance/test_more.py::test_other_words",
    );
    // 25 other tests keep each run above the gate; what is checked is which tests they are.
    let padding: Vec<String> = (0..25)
        .map(|n| format!("tests/test_b.py::test_{n}"))
        .collect();
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut all: Vec<(&str, &str)> = padding.iter().map(|p| (p.as_str(), "passed")).collect();
        all.extend_from_slice(extra);
        all
    };
    let first = with(&[(ok, "passed"), (shout, "failed")]);
    let only = post_outcomes(&t, "TEST-001", "t0", &first).await;
    // The first run alone cannot show acceptance tests beside the original ones.
    let refused = complete(&t, "TEST-001", evidence(only, "t0"))
        .await
        .expect_error(409, "evidence_mismatch");
    assert!(
        refused.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("only run"),
        "{}",
        refused.body
    );

    for (outcomes, detail) in [
        // An originally passing test is gone: pass-to-pass.
        (with(&[(shout, "passed"), (hidden, "passed")]), "broken"),
        // No acceptance test ran.
        (
            with(&[(ok, "passed"), (shout, "passed")]),
            "acceptanceTests",
        ),
        // The acceptance test fails: a hard-coded answer.
        (
            with(&[(ok, "passed"), (shout, "passed"), (hidden, "failed")]),
            "notPassing",
        ),
    ] {
        let run = post_outcomes(&t, "TEST-001", "t1", &outcomes).await;
        let refused = complete(&t, "TEST-001", evidence(run, "t1"))
            .await
            .expect_error(409, "evidence_mismatch");
        assert!(
            refused.body["error"]["details"].get(detail).is_some(),
            "{detail}: {}",
            refused.body
        );
    }
    let good = with(&[(ok, "passed"), (shout, "passed"), (hidden, "passed")]);
    let run = post_outcomes(&t, "TEST-001", "t2", &good).await;
    let done = complete(&t, "TEST-001", evidence(run, "t2"))
        .await
        .expect_status(200);
    assert_eq!(done.body["result"]["evidence"]["checked"]["by"], "huddled");
}
