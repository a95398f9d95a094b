//! A worker killed with SIGKILL mid-task: its lease expires, another worker completes the task,
//! and every task ends exactly once. Real `huddle worker --exec` processes against a real daemon.

use huddle_sdk::wire::TaskStatus;
use huddle_sdk::Client;
use huddle_tests::cli::{Huddle, Running};
use huddle_tests::clients;
use huddle_tests::{eventually, TestDaemon};
use nix::sys::signal::Signal;

/// Each run appends "<task> <worker>" to `started`; worker A's runs never finish, B's append the
/// task id to `done` and exit 0.
const PROGRAM: &str = r#"echo "$HUDDLE_TASK_ID $WORKER" >> "$0/started"
if [ "$WORKER" = A ]; then echo $$ > "$0/a.pid"; exec sleep 600; fi
echo "$HUDDLE_TASK_ID" >> "$0/done""#;

fn worker(h: &Huddle, name: &str, dir: &std::path::Path) -> Running {
    let mut cmd = h.command(&[
        "worker",
        "--role",
        "tester",
        "--name",
        name,
        "--lease",
        "1s",
        "--wait",
        "1s",
        "--exec",
        "sh",
        "-c",
        PROGRAM,
        dir.to_str().unwrap(),
    ]);
    cmd.env("WORKER", name);
    Running::start(cmd)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_workers_task_is_finished_by_another_exactly_once() {
    let d = TestDaemon::start().await;
    let coord_api = d.team("qa").await;
    let a = d.agent("qa", "tester-a", "tester").await;
    let b = d.agent("qa", "tester-b", "tester").await;
    let coord = Client::new(&d.url, &coord_api.token)
        .unwrap()
        .with_team("qa");
    let ids: Vec<String> = (1..=6).map(|i| format!("TEST-{i:03}")).collect();
    for id in &ids {
        coord.create_task(&clients::task(id, "work")).await.unwrap();
    }
    let dir = tempfile::tempdir().unwrap();

    let mut worker_a = worker(&Huddle::new(&d.url, &a.token, "qa"), "A", dir.path());
    eventually(60, "worker A holds a task and its program runs", || async {
        std::fs::read_to_string(dir.path().join("a.pid")).is_ok_and(|p| p.ends_with('\n'))
    })
    .await;
    let held = coord.get_task("TEST-001").await.unwrap();
    assert_eq!(
        (held.status, held.claimed_by.as_deref()),
        (TaskStatus::InProgress, Some("tester-a"))
    );
    worker_a.signal(Signal::SIGKILL);
    worker_a.exit_code().await;
    // The orphaned program is A's business no more; stop it so it does not outlive the test.
    let orphan: i32 = std::fs::read_to_string(dir.path().join("a.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(orphan), Signal::SIGKILL);

    let mut worker_b = worker(&Huddle::new(&d.url, &b.token, "qa"), "B", dir.path());
    eventually(60, "every task completed", || async {
        let mut all = true;
        for id in &ids {
            all &= coord.get_task(id).await.unwrap().status == TaskStatus::Completed;
        }
        all
    })
    .await;
    worker_b.signal(Signal::SIGTERM);
    assert_eq!(worker_b.exit_code().await, 0);

    let done = std::fs::read_to_string(dir.path().join("done")).unwrap();
    let mut finished: Vec<&str> = done.lines().collect();
    finished.sort();
    assert_eq!(
        finished,
        ids.iter().map(String::as_str).collect::<Vec<_>>(),
        "each task finished exactly once"
    );
    let rescued = coord.get_task("TEST-001").await.unwrap();
    assert_eq!(rescued.claimed_by.as_deref(), Some("tester-b"));
    assert_eq!(
        rescued.attempts, 1,
        "the killed worker's lease expired once"
    );
}
