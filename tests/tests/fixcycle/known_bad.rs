//! The executor's repaired tests must still tell good code from bad: with task metadata
//! `knownBad`, the tests that failed when the task began run against that revision's code in a
//! clean copy, and a test that passes there was weakened, not repaired.

use huddle_sdk::wire::TaskStatus;
use huddle_tests::llm::projects::{pytest_project, SHOUT_BUG, SHOUT_OK};
use huddle_tests::llm::stub::fix;
use huddle_tests::llm::team::{settings, team};
use huddle_tests::llm::LlmStub;
use serde_json::{json, Value};

/// The executor's verdict on a project whose code is right and whose shout test expects the
/// old bug; `known-bad` is the commit with the bug. `reply` is the executor's test fix.
async fn executor_verdict(reply: &str) -> (TaskStatus, Value) {
    let project = pytest_project(true, false);
    let root = &project.root;
    std::fs::write(root.join(".gitignore"), ".huddle/\n__pycache__/\n").unwrap();
    project.git(&["init", "-q", "-b", "main"]);
    project.git(&["add", "-A"]);
    project.git(&["commit", "-q", "-m", "the bug"]);
    project.git(&["tag", "known-bad"]);
    project.write(
        "pkg/strings.py",
        &project.read("pkg/strings.py").replace(SHOUT_BUG, SHOUT_OK),
    );
    project.git(&["commit", "-q", "-am", "the fix, the test not yet"]);
    project.write(
        "tests/test_strings.py",
        &project
            .read("tests/test_strings.py")
            .replace("\"HI!\"", "\"HI?\""),
    );
    project.git(&["commit", "-q", "-am", "the test still expects the bug"]);
    let stub = LlmStub::start(
        "sk-stub",
        vec![fix(&[("tests/test_strings.py", "== \"HI?\"", reply)])],
    )
    .await;
    let t = team().await;
    t.task("QARUN-001", json!({"knownBad": "known-bad"})).await;
    t.start_executor(settings(root, Some(&stub)));
    let task = t.closed("QARUN-001").await;
    let result = t.one("test_result").await.data;
    (task.status, result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_weakened_test_passes_on_the_known_bad_code_and_misses_the_gate() {
    let (status, result) = executor_verdict("in (\"HI!\", \"HI?\")").await;
    assert_eq!(status, TaskStatus::Failed, "{result:#}");
    assert_eq!(result["stopReason"]["kind"], "notVerified", "{result:#}");
    let v = &result["verification"]["knownBad"];
    assert_eq!(
        v["passingOnBad"][0], "tests/test_strings.py::test_shout",
        "{v:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_honest_test_fix_fails_on_the_known_bad_code_and_completes() {
    let (status, result) = executor_verdict("== \"HI!\"").await;
    assert_eq!(status, TaskStatus::Completed, "{result:#}");
    let v = &result["verification"]["knownBad"];
    assert_eq!(v["passingOnBad"], json!([]), "{v:#}");
    assert_eq!(v["tests"], 1);
}
