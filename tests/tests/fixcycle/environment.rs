//! One broken import does not stop all repair: the fixture's `tests/test_broken.py` imports a
//! module that does not exist. It is set aside as a failure of the environment — reported as
//! such — while the cycle still repairs the real bug in `pkg/strings.py`.

use huddle_sdk::wire::TaskStatus;
use huddle_tests::llm::projects::{pytest_project, SHOUT_BUG, SHOUT_OK, STRINGS_PY};
use huddle_tests::llm::stub::fix;
use huddle_tests::llm::team::{settings, team};
use huddle_tests::llm::LlmStub;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_import_is_set_aside_and_the_other_failure_is_still_repaired() {
    let project = pytest_project(true, false);
    project.write(
        "tests/test_broken.py",
        "import does_not_exist  # noqa: F401\n\n\ndef test_never_runs():\n    assert True\n",
    );
    let stub = LlmStub::start(
        "sk-stub",
        vec![fix(&[("pkg/strings.py", SHOUT_BUG, SHOUT_OK)])],
    )
    .await;
    let t = team().await;
    t.task("TEST-001", json!({})).await;
    t.start_tester(settings(&project.root, Some(&stub)));
    let task = t.closed("TEST-001").await;

    assert_eq!(stub.requests().len(), 1, "the repairable failure was sent");
    assert!(
        stub.user_message(0)
            .contains("tests/test_strings.py::test_shout"),
        "{}",
        stub.user_message(0)
    );
    assert_eq!(project.read("pkg/strings.py"), STRINGS_PY);
    assert_eq!(
        task.status,
        TaskStatus::Failed,
        "the broken file still fails"
    );
    let required = t.one("fix_required").await.data;
    assert_eq!(required["category"], "environment");
    assert_eq!(required["tests"], json!(["tests/test_broken.py"]));
    assert!(
        required["reason"]
            .as_str()
            .unwrap()
            .contains("No module named 'does_not_exist'"),
        "{required:#}"
    );
    let d = t.one("test_result").await.data;
    assert_eq!(d["environmentFailures"], json!(["tests/test_broken.py"]));
    assert_eq!(d["errors"], 1, "{d:#}");
    assert_eq!(d["counts"], "7 of 8 run passed, 1 error");
}
