//! The worker runtime when things go wrong: a handler that overruns its lease loses the task to
//! another worker, a task taken back cancels its handler, and a panic fails only its own task.

use huddle_sdk::wire::{Role, Task, TaskStatus};
use huddle_sdk::{Client, HandlerResult, TaskContext, Worker};
use huddle_tests::clients;
use huddle_tests::proxy::Proxy;
use huddle_tests::{eventually, TestDaemon};
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// A handler that says it started, then never finishes on its own: it returns only when told
/// to stop, and records that it was.
fn overrunning(
    started: mpsc::UnboundedSender<String>,
    cancelled: Arc<AtomicBool>,
) -> impl Fn(Task, TaskContext) -> futures::future::BoxFuture<'static, HandlerResult>
       + Send
       + Sync
       + 'static {
    move |task: Task, ctx: TaskContext| {
        let (started, cancelled) = (started.clone(), cancelled.clone());
        Box::pin(async move {
            let _ = started.send(task.id.clone());
            ctx.cancelled().await;
            cancelled.store(true, Ordering::SeqCst);
            Ok(json!({ "by": "the overrunning handler" }))
        })
    }
}

async fn finishing(task: Task, _ctx: TaskContext) -> HandlerResult {
    Ok(json!({ "by": "the second worker", "task": task.id }))
}

async fn task_state(client: &Client, id: &str) -> Task {
    client.get_task(id).await.expect("task readable")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_that_overruns_its_lease_loses_the_task_and_another_worker_completes_it() {
    let d = TestDaemon::start().await;
    let coord = clients::team(&d, "qa").await;
    coord
        .create_task(&clients::task("TEST-001", "slow"))
        .await
        .unwrap();
    let token_a = clients::admin(&d)
        .with_team("qa")
        .create_agent("tester-a", Role::Tester)
        .await
        .unwrap()
        .token;
    let proxy = Proxy::start(d.addr).await;
    let a = Client::builder(&proxy.url)
        .token(&token_a)
        .team("qa")
        .build()
        .unwrap();
    let b = clients::agent(&d, "qa", "tester-b", Role::Tester).await;

    let (started_tx, mut started) = mpsc::unbounded_channel();
    let cancelled = Arc::new(AtomicBool::new(false));
    let stop = CancellationToken::new();
    let worker_a = Worker::new(a, overrunning(started_tx, cancelled.clone()))
        .lease(Duration::from_secs(2))
        .wait(Duration::from_secs(2))
        .max_backoff(Duration::from_millis(200));
    let worker_a = tokio::spawn(worker_a.run_until(stop.clone()));
    assert_eq!(started.recv().await.as_deref(), Some("TEST-001"));

    // Worker A can no longer reach the daemon: its heartbeats stop, so its lease runs out.
    proxy.cut();
    let worker_b = Worker::new(b.clone(), finishing).wait(Duration::from_secs(2));
    let worker_b = tokio::spawn(worker_b.run_until(stop.clone()));
    eventually(60, "the second worker completed TEST-001", || async {
        task_state(&b, "TEST-001").await.status == TaskStatus::Completed
    })
    .await;
    let task = task_state(&b, "TEST-001").await;
    assert_eq!(task.claimed_by.as_deref(), Some("tester-b"));
    assert_eq!(task.result.unwrap()["by"], "the second worker");
    assert!(task.attempts >= 1, "a lease expired");
    eventually(60, "the overrunning handler was told to stop", || async {
        cancelled.load(Ordering::SeqCst)
    })
    .await;

    proxy.heal();
    stop.cancel();
    let stats_a = worker_a.await.unwrap().expect("worker A stopped cleanly");
    let stats_b = worker_b.await.unwrap().expect("worker B stopped cleanly");
    assert_eq!(stats_a.completed, 0);
    assert!(stats_a.lost >= 1, "{stats_a:?}");
    assert_eq!(stats_b.completed, 1);
    assert_eq!(
        task_state(&b, "TEST-001").await.result.unwrap()["by"],
        "the second worker",
        "A's late result was dropped"
    );
}

#[tokio::test]
async fn a_task_taken_back_from_a_worker_cancels_its_handler() {
    let d = TestDaemon::start().await;
    let coord = clients::team(&d, "qa").await;
    coord
        .create_task(&clients::task("TEST-001", "slow"))
        .await
        .unwrap();
    let a = clients::agent(&d, "qa", "tester-a", Role::Tester).await;
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let cancelled = Arc::new(AtomicBool::new(false));
    let stop = CancellationToken::new();
    let worker = Worker::new(a, overrunning(started_tx, cancelled.clone()))
        .lease(Duration::from_millis(1500));
    let worker = tokio::spawn(worker.run_until(stop.clone()));
    assert_eq!(started.recv().await.as_deref(), Some("TEST-001"));

    coord
        .fail_final("TEST-001", "the coordinator gave up on it")
        .await
        .unwrap();
    eventually(60, "the handler was cancelled", || async {
        cancelled.load(Ordering::SeqCst)
    })
    .await;
    stop.cancel();
    let stats = worker.await.unwrap().unwrap();
    assert_eq!((stats.completed, stats.failed, stats.lost), (0, 0, 1));
    let task = task_state(&coord, "TEST-001").await;
    assert_eq!(
        task.failure_reason.as_deref(),
        Some("the coordinator gave up on it")
    );
}

async fn panics_on_three(task: Task, _ctx: TaskContext) -> HandlerResult {
    if task.id == "TEST-003" {
        panic!("boom on {}", task.id);
    }
    Ok(json!({ "ok": task.id }))
}

#[tokio::test]
async fn a_handler_panic_fails_only_its_task_and_the_worker_goes_on() {
    let d = TestDaemon::start().await;
    let coord = clients::team(&d, "qa").await;
    let ids: Vec<String> = (1..=5).map(|i| format!("TEST-00{i}")).collect();
    coord
        .create_tasks(
            &ids.iter()
                .map(|id| clients::task(id, "work"))
                .collect::<Vec<_>>(),
        )
        .await
        .unwrap();
    let tester = clients::agent(&d, "qa", "tester-1", Role::Tester).await;
    let stop = CancellationToken::new();
    let worker = tokio::spawn(
        Worker::new(tester, panics_on_three)
            .wait(Duration::from_secs(2))
            .run_until(stop.clone()),
    );

    let closed = |id: &'static str| {
        let coord = coord.clone();
        move || {
            let coord = coord.clone();
            async move {
                !matches!(
                    task_state(&coord, id).await.status,
                    TaskStatus::Pending | TaskStatus::InProgress
                )
            }
        }
    };
    eventually(60, "the first five tasks are closed", closed("TEST-005")).await;
    coord
        .create_task(&clients::task("TEST-006", "after the panic"))
        .await
        .unwrap();
    eventually(60, "the worker went on after the panic", closed("TEST-006")).await;
    stop.cancel();
    let stats = worker.await.unwrap().unwrap();
    // A panic fails the attempt: TEST-003 is tried until its three attempts are used.
    assert_eq!((stats.completed, stats.failed), (5, 3));

    for i in 1..=6 {
        let task = task_state(&coord, &format!("TEST-00{i}")).await;
        if i == 3 {
            assert_eq!((task.status, task.attempts), (TaskStatus::Failed, 3));
            assert_eq!(
                task.failure_reason.as_deref(),
                Some("handler panicked: boom on TEST-003")
            );
        } else {
            assert_eq!(task.status, TaskStatus::Completed, "TEST-00{i}");
        }
    }
}
