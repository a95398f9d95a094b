//! Claims filtered by project from the command line: `huddle task claim --project` and
//! `huddle worker --project DIR --project-name`, as real processes.

use huddle_sdk::wire::TaskStatus;
use huddle_sdk::Client;
use huddle_tests::cli::{Huddle, Running};
use huddle_tests::llm::projects::pytest_project;
use huddle_tests::{eventually, TestDaemon};

#[tokio::test]
async fn task_claim_takes_only_the_projects_tasks() {
    let d = TestDaemon::start().await;
    let coord = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    let as_coord = Huddle::new(&d.url, &coord.token, "qa");
    let as_tester = Huddle::new(&d.url, &tester.token, "qa");
    for (id, meta) in [
        ("TEST-001", r#"{"project": "shop"}"#),
        ("TEST-002", "{}"),
        ("TEST-003", r#"{"project": "calc"}"#),
    ] {
        as_coord
            .ok(&["task", "add", id, "tests", "--metadata", meta])
            .await;
    }
    let strict = ["task", "claim", "--project", "calc", "--strict-project"];
    assert_eq!(as_tester.json(&strict).await["id"], "TEST-003");
    assert!(as_tester.json(&strict).await.is_null());
    let loose = ["task", "claim", "--project", "calc"];
    assert_eq!(as_tester.json(&loose).await["id"], "TEST-002");
    assert!(as_tester.json(&loose).await.is_null());
    let (code, err) = as_tester
        .fails(&["task", "claim", "--strict-project"])
        .await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--project"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_on_a_checkout_takes_only_tasks_of_its_project() {
    let project = pytest_project(false, false);
    let d = TestDaemon::start().await;
    let coord_api = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    let coord = Client::new(&d.url, &coord_api.token)
        .unwrap()
        .with_team("qa");
    let as_coord = Huddle::new(&d.url, &coord_api.token, "qa");
    // Oldest first: a worker that ignored projects would take TEST-001 first.
    as_coord
        .ok(&[
            "task",
            "add",
            "TEST-001",
            "shop",
            "--metadata",
            r#"{"project": "shop"}"#,
        ])
        .await;
    as_coord
        .ok(&[
            "task",
            "add",
            "TEST-002",
            "calc",
            "--metadata",
            r#"{"project": "calc"}"#,
        ])
        .await;
    let as_tester = Huddle::new(&d.url, &tester.token, "qa");
    let dir = project.root.to_str().unwrap();
    let args = [
        "worker",
        "--role",
        "tester",
        "--wait",
        "1s",
        "--project",
        dir,
        "--project-name",
        "calc",
    ];
    let mut cmd = as_tester.command(&args);
    for var in [
        "HUDDLE_LLM_BASE_URL",
        "HUDDLE_LLM_MODEL",
        "HUDDLE_LLM_API_KEY",
    ] {
        cmd.env_remove(var);
    }
    let _worker = Running::start(cmd);
    eventually(180, "TEST-002 completed", || async {
        coord.get_task("TEST-002").await.unwrap().status == TaskStatus::Completed
    })
    .await;
    let shop = coord.get_task("TEST-001").await.unwrap();
    assert_eq!((shop.status, shop.attempts), (TaskStatus::Pending, 0));
}
