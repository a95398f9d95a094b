//! Limits from the team's shared memory and the task's metadata, and the `error` messages for a
//! runner that is missing or times out.

use huddle_sdk::wire::{NewTask, TaskStatus};
use huddle_tests::llm::projects::{pytest_project, SHOUT_BUG, SHOUT_OK};
use huddle_tests::llm::stub::fix;
use huddle_tests::llm::team::{settings, team};
use huddle_tests::llm::LlmStub;
use serde_json::json;

fn task(metadata: serde_json::Value) -> NewTask {
    NewTask {
        id: Some("TEST-001".into()),
        subject: "strings".into(),
        metadata: Some(metadata),
        ..NewTask::default()
    }
}

/// A task with one attempt: a runner that cannot run fails only the attempt, so with more
/// attempts the task would be tried (and the error posted) again.
fn one_attempt(metadata: serde_json::Value) -> NewTask {
    NewTask {
        max_attempts: Some(1),
        ..task(metadata)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_metadata_caps_the_iterations() {
    let project = pytest_project(true, false);
    let stub = LlmStub::start("sk", vec![fix(&[("pkg/strings.py", SHOUT_BUG, SHOUT_OK)])]).await;
    let t = team().await;
    t.coord
        .create_task(&task(json!({"cycle": {"maxIterations": 1}})))
        .await
        .unwrap();
    t.start_tester(settings(&project.root, Some(&stub)));
    let done = t.closed("TEST-001").await;
    assert_eq!(done.status, TaskStatus::Failed);
    assert!(done.failure_reason.unwrap().contains("iteration cap (1)"));
    assert!(
        stub.requests().is_empty(),
        "no fix is attempted in the last iteration"
    );
    assert_eq!(t.one("test_result").await.data["iterations"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_teams_cycle_config_sets_the_quality_gate() {
    let project = pytest_project(true, false);
    let t = team().await;
    t.coord
        .patch_memory(
            &json!({"cycle_config": {"tester": {"quality_gate": 80}}}),
            None,
        )
        .await
        .unwrap();
    t.coord.create_task(&task(json!({}))).await.unwrap();
    t.start_tester(settings(&project.root, None));
    let done = t.closed("TEST-001").await;
    assert_eq!(
        done.status,
        TaskStatus::Completed,
        "6/7 passing meets an 80 % gate: {:?}",
        done.failure_reason
    );
    let d = t.one("test_result").await.data;
    assert_eq!(d["qualityGatePassed"], true);
    assert_eq!(
        d["remainingFailures"]["medium"],
        json!(["tests/test_strings.py::test_shout"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_runner_is_reported_as_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("package.json"),
        r#"{"name":"x","devDependencies":{"jest":"30.0.0"}}"#,
    )
    .unwrap();
    let t = team().await;
    t.coord.create_task(&one_attempt(json!({}))).await.unwrap();
    t.start_tester(settings(dir.path(), None));
    let done = t.closed("TEST-001").await;
    assert_eq!(done.status, TaskStatus::Failed);
    let e = t.one("error").await.data;
    assert_eq!(
        (e["code"].as_str(), e["tool"].as_str(), e["taskId"].as_str()),
        (Some("runner_missing"), Some("jest"), Some("TEST-001")),
        "{e:#}"
    );
    assert!(e["message"].as_str().unwrap().contains("npm ci"), "{e:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_times_out_is_reported_as_an_error() {
    let project = pytest_project(false, false);
    project.write(
        "tests/test_slow.py",
        "import time\n\n\ndef test_sleeps():\n    time.sleep(120)\n",
    );
    let t = team().await;
    t.coord
        .create_task(&one_attempt(json!({"cycle": {"runTimeoutSecs": 2}})))
        .await
        .unwrap();
    t.start_tester(settings(&project.root, None));
    let done = t.closed("TEST-001").await;
    assert_eq!(done.status, TaskStatus::Failed);
    let e = t.one("error").await.data;
    assert_eq!(
        (e["code"].as_str(), e["tool"].as_str()),
        (Some("runner_timeout"), Some("pytest")),
        "{e:#}"
    );
}

/// A model endpoint nobody listens on: the cycle stops at the first call with one `error`
/// naming the endpoint, rather than spending ten iterations on calls that cannot succeed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_model_stops_the_cycle_with_one_error() {
    let project = pytest_project(true, false);
    let closed_port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let model = huddle_sdk::llm::LlmSettings {
        base_url: Some(format!("http://127.0.0.1:{closed_port}/v1")),
        model: Some("stub-model".into()),
        api_key: Some("sk-unused".into()),
        timeout_secs: Some(5),
        retry_backoff_ms: Some(10),
        ..Default::default()
    };
    let t = team().await;
    t.coord.create_task(&task(json!({}))).await.unwrap();
    t.start_tester(
        huddle_sdk::roles::RoleSettings::new(&project.root)
            .with_llm(model)
            .unwrap(),
    );
    let done = t.closed("TEST-001").await;
    assert_eq!(done.status, TaskStatus::Failed);
    let error = t.one("error").await;
    assert_eq!(error.data["code"], "model_unreachable");
    assert_eq!(error.data["tool"], "llm");
    assert!(
        error.summary.contains("cannot reach the model endpoint"),
        "{}",
        error.summary
    );
    assert!(t.messages("fix_required").await.is_empty());
    let result = t.one("test_result").await.data;
    assert_eq!(
        result["iterations"], 1,
        "stopped at the first call: {result}"
    );
    let progress = t.fix_progress().await;
    assert!(progress.len() <= 1, "{} progress notes", progress.len());
}
