//! `huddle worker --exec` as a real process: completes or fails tasks by the program's exit
//! code, and on SIGTERM lets the current task finish within the grace period or releases it.

use huddle_sdk::wire::{NewTask, Task, TaskStatus};
use huddle_sdk::{Client, MessageQuery};
use huddle_tests::cli::{huddle_bin, Huddle, Running};
use huddle_tests::clients;
use huddle_tests::{eventually, TestDaemon};
use nix::sys::signal::Signal;
use serde_json::json;

/// The task JSON arrives on stdin, the id in the environment; `"mode":"fail"` in the metadata
/// makes it exit 3. It also posts a message with the worker's own identity.
const SCRIPT: &str = r#"input=$(cat)
"$HUDDLE_BIN" msg post --type impl_progress "working on $HUDDLE_TASK_ID" > /dev/null || exit 9
case "$input" in *'"mode":"fail"'*) echo "cannot do $HUDDLE_TASK_ID" >&2; exit 3;; esac
printf '{"task":"%s","attempt":%s,"subjects":%s}' "$HUDDLE_TASK_ID" "$HUDDLE_TASK_ATTEMPT" "$(printf '%s' "$input" | grep -c '"subject"')""#;

struct Setup {
    _daemon: TestDaemon,
    coord: Client,
    tester: Huddle,
}

async fn setup() -> Setup {
    let d = TestDaemon::start().await;
    let coord_api = d.team("qa").await;
    let tester_api = d.agent("qa", "tester-1", "tester").await;
    let coord = Client::new(&d.url, &coord_api.token)
        .unwrap()
        .with_team("qa");
    let tester = Huddle::new(&d.url, &tester_api.token, "qa");
    Setup {
        _daemon: d,
        coord,
        tester,
    }
}

/// `huddle worker` as tester-1 with `options`, running `program` per task.
fn worker(h: &Huddle, options: &[&str], program: &[&str]) -> Running {
    let mut args = vec!["worker", "--role", "tester", "--name", "w1", "--wait", "1s"];
    args.extend_from_slice(options);
    args.push("--exec");
    args.extend_from_slice(program);
    let mut cmd = h.command(&args);
    cmd.env("HUDDLE_BIN", huddle_bin());
    Running::start(cmd)
}

async fn state(coord: &Client, id: &str) -> Task {
    coord.get_task(id).await.expect("task")
}

async fn wait_status(coord: &Client, id: &str, status: TaskStatus) {
    eventually(60, &format!("{id} is {status}"), || async {
        state(coord, id).await.status == status
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_completes_on_exit_zero_and_fails_with_the_reason_otherwise() {
    let s = setup().await;
    s.coord
        .create_task(&clients::task("TEST-001", "works"))
        .await
        .unwrap();
    s.coord
        .create_task(&NewTask {
            metadata: Some(json!({"mode": "fail"})),
            max_attempts: Some(2),
            ..clients::task("TEST-002", "breaks")
        })
        .await
        .unwrap();
    let mut w = worker(&s.tester, &[], &["sh", "-c", SCRIPT]);

    wait_status(&s.coord, "TEST-001", TaskStatus::Completed).await;
    wait_status(&s.coord, "TEST-002", TaskStatus::Failed).await;
    let done = state(&s.coord, "TEST-001").await;
    let result = done.result.expect("a result");
    assert_eq!(result["exitCode"], 0);
    assert_eq!(
        result["output"],
        json!({"task": "TEST-001", "attempt": 1, "subjects": 1}),
        "stdin had the task JSON"
    );
    assert_eq!(
        result["stdout"],
        r#"{"task":"TEST-001","attempt":1,"subjects":1}"#
    );
    // A failing program fails the attempt: the task is tried again until its attempts are used.
    let failed = state(&s.coord, "TEST-002").await;
    assert_eq!(
        failed.failure_reason.as_deref(),
        Some("sh exited with code 3: cannot do TEST-002")
    );
    assert_eq!(failed.attempts, 2);
    let posted = s
        .coord
        .list_messages(&MessageQuery {
            from: Some("tester-1".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let summaries: Vec<_> = posted.messages.iter().map(|m| m.summary.as_str()).collect();
    assert_eq!(
        summaries,
        [
            "working on TEST-001",
            "working on TEST-002",
            "working on TEST-002"
        ],
        "the program talks as the worker"
    );

    w.signal(Signal::SIGTERM);
    assert_eq!(w.exit_code().await, 0);
    w.stderr
        .wait_for("worker stopped: 1 completed, 2 failed")
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_releases_a_task_that_does_not_finish_within_the_grace_period() {
    let s = setup().await;
    s.coord
        .create_task(&clients::task("TEST-001", "never ends"))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let mut w = worker(
        &s.tester,
        &["--grace", "200ms"],
        &[
            "sh",
            "-c",
            r#"echo $$ > "$0"; exec sleep 600"#,
            pid_file.to_str().unwrap(),
        ],
    );

    wait_status(&s.coord, "TEST-001", TaskStatus::InProgress).await;
    eventually(60, "the program started", || async {
        std::fs::read_to_string(&pid_file).is_ok_and(|p| p.ends_with('\n'))
    })
    .await;
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    w.signal(Signal::SIGTERM);
    assert_eq!(w.exit_code().await, 0, "a clean exit");
    w.stderr.wait_for("released TEST-001").await;

    let task = state(&s.coord, "TEST-001").await;
    assert_eq!(
        (task.status, task.claimed_by, task.attempts),
        (TaskStatus::Pending, None, 0)
    );
    eventually(60, "the program was killed", || async {
        // Gone, or a zombie waiting for a reaper: either way no longer running.
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map_or(true, |stat| stat.contains(") Z "))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_the_current_task_finish_within_the_grace_period() {
    let s = setup().await;
    s.coord
        .create_task(&clients::task("TEST-001", "finishes on cue"))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let flag = dir.path().join("go");
    let script = r#"while [ ! -e "$0" ]; do sleep 0.05; done; echo finished"#;
    let mut w = worker(
        &s.tester,
        &["--grace", "60s"],
        &["sh", "-c", script, flag.to_str().unwrap()],
    );

    wait_status(&s.coord, "TEST-001", TaskStatus::InProgress).await;
    w.signal(Signal::SIGTERM);
    w.stderr.wait_for("letting TEST-001 finish").await;
    std::fs::write(&flag, "").unwrap();
    assert_eq!(w.exit_code().await, 0);
    let task = state(&s.coord, "TEST-001").await;
    assert_eq!(task.status, TaskStatus::Completed);
    assert_eq!(task.result.unwrap()["stdout"], "finished\n");
}

#[tokio::test]
async fn worker_arguments_are_checked() {
    let s = setup().await;
    let (code, err) = s
        .tester
        .fails(&["worker", "--role", "coordinator", "--exec", "true"])
        .await;
    assert_eq!(code, 2);
    assert!(err.contains("a worker is a tester or an executor"), "{err}");
    let (code, err) = s.tester.fails(&["worker", "--role", "tester"]).await;
    assert_eq!(code, 2);
    assert!(err.contains("--exec"), "{err}");
    let (code, err) = s
        .tester
        .fails(&[
            "worker", "--role", "tester", "--grace", "soon", "--exec", "true",
        ])
        .await;
    assert_eq!(code, 2);
    assert!(err.contains("invalid duration"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_rides_out_a_stopped_daemon_logging_once_each_way() {
    let mut d = TestDaemon::start().await;
    let coord_api = d.team("qa").await;
    let tester_api = d.agent("qa", "tester-1", "tester").await;
    let coord = Client::new(&d.url, &coord_api.token)
        .unwrap()
        .with_team("qa");
    let tester = Huddle::new(&d.url, &tester_api.token, "qa");
    let mut w = worker(&tester, &[], &["true"]);
    w.stderr.wait_for("worker started").await;

    d.stop().await;
    w.stderr
        .wait_for("daemon unreachable, backing off and retrying")
        .await;
    let d = d.restart().await;
    w.stderr.wait_for("daemon reachable again").await;
    coord
        .create_task(&clients::task("TEST-001", "after the outage"))
        .await
        .unwrap();
    wait_status(&coord, "TEST-001", TaskStatus::Completed).await;

    w.signal(Signal::SIGTERM);
    assert_eq!(w.exit_code().await, 0);
    while w.stderr.next().await.is_some() {}
    let count = |needle: &str| w.stderr.seen.iter().filter(|l| l.contains(needle)).count();
    assert_eq!(
        count("backing off"),
        1,
        "one line for the outage, however many retries: {:#?}",
        w.stderr.seen
    );
    assert_eq!(count("reachable again"), 1, "{:#?}", w.stderr.seen);
    drop(d);
}

#[tokio::test]
async fn a_worker_with_a_bad_token_stops_with_the_reason() {
    let s = setup().await;
    let stranger = Huddle::new(&s.tester.url, "not-a-token", "qa");
    let (code, err) = stranger
        .fails(&["worker", "--role", "tester", "--exec", "true"])
        .await;
    assert_eq!(code, 1);
    assert!(err.lines().last().unwrap().contains("401"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_past_its_timeout_is_killed_and_its_task_failed() {
    let s = setup().await;
    s.coord
        .create_task(&clients::task("TEST-001", "hangs"))
        .await
        .unwrap();
    let mut w = worker(&s.tester, &["--timeout", "300ms"], &["sleep", "600"]);
    wait_status(&s.coord, "TEST-001", TaskStatus::Failed).await;
    let reason = state(&s.coord, "TEST-001").await.failure_reason.unwrap();
    assert!(
        reason.starts_with("[TIMEOUT] sleep ran longer than"),
        "{reason}"
    );
    w.signal(Signal::SIGTERM);
    assert_eq!(w.exit_code().await, 0);
}
