//! The tester and the team's test history: each full run is posted; a failure the history saw
//! pass and fail on the same tree is re-run once before any repair is asked for, and the bus
//! says so. The flaky test is deterministic per run: a counter file outside the project makes
//! it fail on its first run only.

use huddle_sdk::roles::history::{project_name, tree_hash};
use huddle_sdk::wire::{NewTask, NewTestRun, TaskStatus, TestOutcome, TestResultRecord};
use huddle_tests::llm::projects::pytest_project;
use huddle_tests::llm::team::{settings, team};
use huddle_tests::llm::LlmStub;

const COIN: &str = "tests/test_flaky.py::test_coin";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_known_flaky_failure_is_rerun_before_any_repair_and_the_bus_says_so() {
    // The counter is outside the project, which a sandboxed run may not write: no sandbox
    // (nextest runs each test in a process of its own).
    huddle_sdk::runners::Sandbox::set_process_default(huddle_sdk::runners::Sandbox::Off);
    let project = pytest_project(false, false);
    let counter = project
        .root
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("counter");
    project.write(
        "tests/test_flaky.py",
        &format!(
            "import pathlib\n\nCOUNTER = pathlib.Path({:?})\n\n\n\
def test_coin():\n    n = int(COUNTER.read_text()) if COUNTER.exists() else 0\n    \
COUNTER.write_text(str(n + 1))\n    assert n != 0, \"fails on its first run only\"\n",
            counter.to_str().unwrap()
        ),
    );
    // The history already saw the coin pass three times and fail once on this very tree.
    let tree = tree_hash(&project.root).unwrap();
    let t = team().await;
    for outcome in [
        TestOutcome::Passed,
        TestOutcome::Failed,
        TestOutcome::Passed,
        TestOutcome::Passed,
    ] {
        t.coord
            .post_test_run(&NewTestRun {
                project: project_name(&project.root),
                tree: tree.clone(),
                started_at: None,
                tier: None,
                task: None,
                artifacts: None,
                outcomes: vec![TestResultRecord {
                    nodeid: COIN.into(),
                    outcome,
                }],
            })
            .await
            .unwrap();
    }
    // No scripted answer: any model call would fail the cycle. Re-checks are off, so only the
    // history makes the tester re-run the coin.
    let stub = LlmStub::start("sk-stub-key-0123456789abcdef", vec![]).await;
    let mut s = settings(&project.root, Some(&stub));
    s.cycles.tester.recheck_flaky = false;
    t.coord
        .create_tasks(&[NewTask {
            id: Some("TEST-001".into()),
            subject: "test the fixture".into(),
            ..NewTask::default()
        }])
        .await
        .unwrap();
    t.start_tester(s);

    let task = t.closed("TEST-001").await;
    assert_eq!(
        task.status,
        TaskStatus::Completed,
        "{:?}",
        task.failure_reason
    );
    assert!(stub.requests().is_empty(), "no repair was asked for");
    let progress = t.messages("impl_progress").await;
    let note = progress
        .iter()
        .find(|m| m.data["knownFlaky"] == true)
        .unwrap_or_else(|| panic!("no known-flaky message: {progress:#?}"));
    assert_eq!(
        note.summary,
        format!(
            "TEST-001: {COIN} is known flaky (3 passes, 2 failures on this tree); re-ran: passed"
        )
    );
    assert_eq!(note.from, "tester");

    // The tester's three full runs (the failing one, the checkout's verdict, then its re-run in
    // a clean copy, which is the evidence) are in the history, all on the one tree.
    let history = t.coord.test_history(None).await.unwrap();
    assert_eq!(history.project, Some(project_name(&project.root)));
    let tester_runs: Vec<_> = history
        .runs
        .iter()
        .filter(|r| r.agent == "tester")
        .collect();
    assert_eq!(tester_runs.len(), 3, "{history:#?}");
    assert_eq!((tester_runs[0].passed, tester_runs[0].failed), (7, 1));
    assert_eq!((tester_runs[1].passed, tester_runs[1].failed), (8, 0));
    assert_eq!((tester_runs[2].passed, tester_runs[2].failed), (8, 0));
    assert!(tester_runs.iter().all(|r| r.tree == tree));
}

/// Two checkouts of one repository share a history: without a `project` in the task, the
/// checkout's git `origin` names it (credentials left out), not the directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_history_names_a_git_checkout_by_its_origin() {
    huddle_tests::llm::projects::require_tool("git");
    let project = pytest_project(false, false);
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(&project.root)
            .args(args)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&[
        "remote",
        "add",
        "origin",
        "https://ci:s3cr3t@example.com/acme/shop.git",
    ]);
    let t = team().await;
    t.task("TEST-001", serde_json::json!({})).await;
    t.start_tester(settings(&project.root, None));
    let task = t.closed("TEST-001").await;
    assert_eq!(
        task.status,
        TaskStatus::Completed,
        "{:?}",
        task.failure_reason
    );
    let history = t.coord.test_history(None).await.unwrap();
    assert_eq!(history.project.as_deref(), Some("example.com/acme/shop"));
    assert_eq!(
        task.result.unwrap()["evidence"]["project"],
        "example.com/acme/shop"
    );
}
