//! A verdict is earned: model replies that would make the suite pass without fixing the bug —
//! a failing test renamed, deselected in `pytest.ini`, skipped from a `conftest.py` hook, its
//! file dropped from jest's config, its expectation rewritten — never yield
//! `qualityGatePassed: true` or a completed task. By default the guard refuses them; where a
//! task allows test or config edits, the vanished tests still count as failed.

use huddle_sdk::wire::TaskStatus;
use huddle_tests::llm::projects::{jest_project, pytest_project, SHOUT_BUG};
use huddle_tests::llm::stub::{fix, Scripted};
use huddle_tests::llm::team::{settings, team, Team};
use huddle_tests::llm::LlmStub;
use serde_json::{json, Value};
use std::path::Path;

const SHOUT: &str = "tests/test_strings.py::test_shout";
const RENAME: (&str, &str, &str) = (
    "tests/test_strings.py",
    "def test_shout():",
    "def _shout():",
);
const DESELECT: (&str, &str, &str) = (
    "pytest.ini",
    "testpaths = tests\n",
    "testpaths = tests\naddopts = --deselect tests/test_strings.py::test_shout\n",
);
const EXPECT: (&str, &str, &str) = (
    "tests/test_strings.py",
    "assert shout(\"hi\") == \"HI!\"",
    "assert shout(\"hi\") == \"HI?\"",
);

/// Runs TEST-001 with `metadata` on `root` against a model answering `script`; returns the
/// team, the closed task and its `test_result` data.
async fn tester(root: &Path, script: Vec<Scripted>, metadata: Value) -> (Team, LlmStub, Value) {
    let stub = LlmStub::start("sk-stub", script).await;
    let t = team().await;
    t.task("TEST-001", metadata).await;
    t.start_tester(settings(root, Some(&stub)));
    let task = t.closed("TEST-001").await;
    assert_eq!(task.status, TaskStatus::Failed, "the bug is still there");
    let result = t.one("test_result").await.data;
    assert_eq!(result["qualityGatePassed"], false, "{result:#}");
    // The failed task keeps the verdict (evidence, files, diff), as a completed one does.
    let kept = task
        .result
        .expect("a failed task keeps its verdict as its result");
    assert_eq!(kept["qualityGatePassed"], false, "{kept:#}");
    assert_eq!(kept["evidence"], result["evidence"], "{kept:#}");
    assert!(kept["evidence"]["runId"].is_i64(), "{kept:#}");
    assert_eq!(kept["changedFiles"], result["changedFiles"]);
    assert_eq!(kept["diff"], result["diff"]);
    (t, stub, result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renamed_failing_test_still_counts_as_failed() {
    let project = pytest_project(true, false);
    let meta = json!({"allowTestEdits": true, "cycle": {"maxIterations": 2}});
    let (_t, _stub, d) = tester(&project.root, vec![fix(&[RENAME])], meta).await;
    assert!(project.read("tests/test_strings.py").contains("def _shout"));
    assert!(project.read("pkg/strings.py").contains(SHOUT_BUG));
    assert_eq!(d["vanished"], json!([SHOUT]), "{d:#}");
    assert_eq!(
        (
            d["total"].as_u64(),
            d["passed"].as_u64(),
            d["failed"].as_u64()
        ),
        (Some(7), Some(6), Some(1)),
        "{d:#}"
    );
    assert_eq!(d["evidence"]["vanished"], json!([SHOUT]));
    assert_eq!(d["evidence"]["counts"]["vanished"], 1);
    assert_eq!(d["testFilesChanged"], json!(["tests/test_strings.py"]));
    let summary = d["summary"].as_str().unwrap();
    assert!(
        summary.contains(&format!("No longer reported, counted as failed: {SHOUT}")),
        "{summary}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_deselected_in_pytest_ini_still_counts_as_failed() {
    let project = pytest_project(true, false);
    let meta = json!({"allowTestConfigEdits": true, "cycle": {"maxIterations": 2}});
    let (t, _stub, d) = tester(&project.root, vec![fix(&[DESELECT])], meta).await;
    assert!(project.read("pytest.ini").contains("--deselect"));
    assert_eq!(d["vanished"], json!([SHOUT]), "{d:#}");
    assert_eq!(d["passRate"].as_f64(), Some(85.7), "6 of 7: {d:#}");
    // Rounded to one decimal wherever a rate goes on the wire: each iteration, the result.
    for h in d["strategyHistory"].as_array().unwrap() {
        let rate = h["passRate"].as_f64().unwrap();
        assert_eq!(rate, (rate * 10.0).round() / 10.0, "{h}");
    }
    assert!(
        t.one("test_result")
            .await
            .summary
            .contains("1 test(s) no longer reported"),
        "the one-line summary says so"
    );
}

/// A skip no marker guard sees — added by a collection hook in `conftest.py` — still leaves
/// the failing test counted as failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_test_skipped_from_a_conftest_hook_still_counts_as_failed() {
    let project = pytest_project(true, false);
    let anchor = "sys.path.insert(0, str(Path(__file__).resolve().parent.parent))\n";
    let hook = format!(
        "{anchor}\n\nimport pytest\n\n\ndef pytest_collection_modifyitems(items):\n    \
for item in items:\n        if item.name == \"test_shout\":\n            \
item.add_marker(pytest.mark.skip(reason=\"later\"))\n"
    );
    let meta = json!({"allowTestEdits": true, "allowTestConfigEdits": true,
                      "cycle": {"maxIterations": 2}});
    let (t, _stub, d) = tester(
        &project.root,
        vec![fix(&[("tests/conftest.py", anchor, &hook)])],
        meta,
    )
    .await;
    assert!(project.read("tests/conftest.py").contains("add_marker"));
    assert!(project.read("pkg/strings.py").contains(SHOUT_BUG));
    assert_eq!(d["vanished"], json!([SHOUT]), "{d:#}");
    assert_eq!(d["passRate"].as_f64(), Some(85.7), "6 of 7: {d:#}");
    assert_eq!(d["evidence"]["vanished"], json!([SHOUT]));
    let task = t.coord.get_task("TEST-001").await.unwrap();
    let kept = task.result.expect("the failed task keeps its verdict");
    assert_eq!(kept["qualityGatePassed"], false, "not a pass: {kept:#}");
    assert_eq!(kept["vanished"], json!([SHOUT]), "{kept:#}");
    assert!(task
        .failure_reason
        .unwrap()
        .starts_with("quality gate not met"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_renames_and_deselects_are_refused_and_the_model_is_given_up_on() {
    let project = pytest_project(true, false);
    let before = project.tree();
    let (t, stub, d) = tester(
        &project.root,
        vec![fix(&[RENAME]), fix(&[DESELECT])],
        json!({}),
    )
    .await;
    assert_eq!(project.tree(), before, "nothing was changed");
    assert_eq!(
        stub.requests().len(),
        2,
        "stopped after two unusable replies"
    );
    assert_eq!(d["modelCalls"], 2);
    let required = t.one("fix_required").await.data;
    assert_eq!(required["category"], "model", "{required:#}");
    let reason = required["reason"].as_str().unwrap();
    for part in [
        "2 unusable replies in a row",
        "`tests/test_strings.py` is a test file",
        "`pytest.ini` may not be edited: it is test configuration",
    ] {
        assert!(reason.contains(part), "{part:?} missing from {reason}");
    }
    assert!(
        stub.user_message(1).contains("is a test file"),
        "the refusal went back to the model"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_expectation_is_refused_even_when_test_edits_are_allowed() {
    let project = pytest_project(true, false);
    let before = project.tree();
    let (t, stub, _d) = tester(
        &project.root,
        vec![fix(&[EXPECT]), fix(&[EXPECT])],
        json!({"allowTestEdits": true}),
    )
    .await;
    assert_eq!(project.tree(), before);
    assert_eq!(stub.requests().len(), 2);
    let reason = t.one("fix_required").await.data["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reason.contains("2 unusable replies in a row")
            && reason.contains("changes what a test expects (`assert shout(\"hi\") == \"HI!\"`)"),
        "{reason}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_file_dropped_from_the_jest_config_counts_as_failed() {
    let project = jest_project();
    let ignore = (
        "package.json",
        "\"testEnvironment\": \"node\"",
        "\"testEnvironment\": \"node\",\n    \"testPathIgnorePatterns\": [\"/node_modules/\", \"strings\"]",
    );
    // Refused by default, as test configuration.
    let (t, stub, _d) = tester(
        &project.root,
        vec![fix(&[ignore]), fix(&[ignore])],
        json!({}),
    )
    .await;
    assert_eq!(stub.requests().len(), 2);
    let reason = t.one("fix_required").await.data["reason"].to_string();
    assert!(
        reason.contains("the edit changes `jest`, which is test configuration"),
        "{reason}"
    );
    drop(t);

    // Allowed: the file's tests vanish and still count.
    let meta = json!({"allowTestConfigEdits": true, "cycle": {"maxIterations": 2}});
    let (_t, _stub, d) = tester(&project.root, vec![fix(&[ignore])], meta).await;
    let vanished: Vec<&str> = d["vanished"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(vanished.len(), 2, "{d:#}");
    assert!(vanished
        .iter()
        .all(|id| id.starts_with("src/strings.test.js::")));
    assert_eq!(
        (d["total"].as_u64(), d["passed"].as_u64()),
        (Some(6), Some(4)),
        "{d:#}"
    );
}

/// The executor's "test files only" mode keeps its meaning — it may rewrite a test's
/// expectation — but such a change never passes unseen: it is flagged on the bus and in the
/// task's result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_executors_changed_expectation_is_flagged() {
    let project = pytest_project(true, false);
    let stub = LlmStub::start("sk-stub", vec![fix(&[EXPECT])]).await;
    let t = team().await;
    t.task("QARUN-001", json!({})).await;
    t.start_executor(settings(&project.root, Some(&stub)));
    let task = t.closed("QARUN-001").await;
    let message = t.one("test_result").await;
    let d = &message.data;
    assert_eq!(
        d["testFilesChanged"],
        json!(["tests/test_strings.py"]),
        "{d:#}"
    );
    assert_eq!(
        d["changedExpectations"],
        json!([{"path": "tests/test_strings.py", "was": "assert shout(\"hi\") == \"HI!\""}])
    );
    assert!(
        message.summary.contains("1 test file(s) changed"),
        "{}",
        message.summary
    );
    assert!(
        d["summary"]
            .as_str()
            .unwrap()
            .contains("**Expectations changed — review them:**"),
        "{d:#}"
    );
    let result = task.result.expect("the executor's pass carries its result");
    assert_eq!(result["changedExpectations"], d["changedExpectations"]);
    assert!(result["diff"]
        .as_str()
        .unwrap()
        .contains("-    assert shout(\"hi\") == \"HI!\""));
}
