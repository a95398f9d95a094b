//! `huddle worker --role tester --project DIR` as a real process: configured from
//! `HUDDLE_LLM_*`, it repairs the project through the stub and never writes the API key to its
//! log; with no model configured it runs the tests, reports and posts `fix_required` naming the
//! missing setting.

use huddle_sdk::wire::{NewTask, TaskStatus};
use huddle_tests::cli::Huddle;
use huddle_tests::llm::projects::{pytest_project, SHOUT_BUG, SHOUT_OK, STRINGS_PY};
use huddle_tests::llm::stub::fix;
use huddle_tests::llm::team::team;
use huddle_tests::llm::LlmStub;
use std::process::Stdio;

/// The model key the worker is given (it must never reach a log or a message).
pub const KEY: &str = "sk-secret-cli-key-0123456789";

/// `huddle worker --role tester --project DIR`, with the stub as its model when given; not
/// started.
pub fn worker_command(
    h: &Huddle,
    project: &std::path::Path,
    stub: Option<&LlmStub>,
) -> tokio::process::Command {
    let root = project.to_str().unwrap();
    let mut cmd = h.command(&[
        "worker",
        "--role",
        "tester",
        "--project",
        root,
        "--wait",
        "1s",
    ]);
    cmd.env("HUDDLE_LOG", "debug")
        .env_remove("HUDDLE_CONFIG")
        .stderr(Stdio::piped())
        .stdout(Stdio::null());
    for k in [
        "HUDDLE_LLM_BASE_URL",
        "HUDDLE_LLM_MODEL",
        "HUDDLE_LLM_API_KEY",
    ] {
        cmd.env_remove(k);
    }
    if let Some(stub) = stub {
        cmd.env("HUDDLE_LLM_BASE_URL", &stub.base_url)
            .env("HUDDLE_LLM_MODEL", "stub-model")
            .env("HUDDLE_LLM_API_KEY", KEY);
    }
    cmd
}

async fn worker(
    h: &Huddle,
    project: &std::path::Path,
    stub: Option<&LlmStub>,
) -> tokio::process::Child {
    worker_command(h, project, stub)
        .spawn()
        .expect("huddle worker starts")
}

/// SIGTERM, then the worker's log once it exited.
pub async fn stop(child: tokio::process::Child) -> String {
    let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let out = child.wait_with_output().await.unwrap();
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tester_worker_repairs_the_project_and_keeps_the_key_out_of_its_log() {
    let project = pytest_project(true, false);
    let stub = LlmStub::start(KEY, vec![fix(&[("pkg/strings.py", SHOUT_BUG, SHOUT_OK)])]).await;
    let t = team().await;
    t.coord
        .create_task(&NewTask {
            id: Some("TEST-001".into()),
            subject: "strings".into(),
            ..NewTask::default()
        })
        .await
        .unwrap();
    let h = Huddle::new(&t.daemon.url, &t.tester_token, "qa");
    let child = worker(&h, &project.root, Some(&stub)).await;
    let task = t.closed("TEST-001").await;
    let log = stop(child).await;
    assert_eq!(
        task.status,
        TaskStatus::Completed,
        "{:?}\n{log}",
        task.failure_reason
    );
    assert_eq!(project.read("pkg/strings.py"), STRINGS_PY);
    assert!(
        log.contains("iteration 1/10"),
        "progress in the log:\n{log}"
    );
    assert!(
        !log.contains(KEY) && !log.contains("secret-cli-key"),
        "the key leaked into the log:\n{log}"
    );
    for m in t
        .coord
        .list_all_messages(&Default::default())
        .await
        .unwrap()
    {
        assert!(!m.data.to_string().contains("secret-cli-key"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_model_the_worker_reports_and_names_the_missing_setting() {
    let project = pytest_project(true, false);
    let t = team().await;
    t.coord
        .create_task(&NewTask {
            id: Some("TEST-001".into()),
            subject: "strings".into(),
            ..NewTask::default()
        })
        .await
        .unwrap();
    let h = Huddle::new(&t.daemon.url, &t.tester_token, "qa");
    let child = worker(&h, &project.root, None).await;
    let task = t.closed("TEST-001").await;
    stop(child).await;
    assert_eq!(task.status, TaskStatus::Failed);
    let required = t.one("fix_required").await;
    assert!(
        required.data["reason"]
            .as_str()
            .unwrap()
            .contains("HUDDLE_LLM_BASE_URL"),
        "{:#}",
        required.data
    );
    assert_eq!(
        required.data["tests"],
        serde_json::json!(["tests/test_strings.py::test_shout"])
    );
    let result = t.one("test_result").await;
    assert_eq!(
        (
            result.data["total"].as_u64(),
            result.data["failed"].as_u64()
        ),
        (Some(7), Some(1))
    );
    assert_eq!(
        project.read("pkg/strings.py"),
        STRINGS_PY.replace(SHOUT_OK, SHOUT_BUG),
        "nothing changed"
    );
}
