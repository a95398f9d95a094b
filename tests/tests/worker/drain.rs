//! Four workers drain 500 tasks with dependencies: each is completed exactly once, never before
//! its blockers.

use huddle_sdk::wire::{NewTask, Role, Task, TaskStatus};
use huddle_sdk::{TaskContext, TaskQuery, Worker, WorkerStats};
use huddle_tests::clients;
use huddle_tests::{eventually, TestDaemon};
use serde_json::json;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const TASKS: usize = 500;

/// What the handlers saw, shared by all four workers.
#[derive(Default)]
struct Ledger {
    runs: HashMap<String, u32>,
    finished: HashSet<String>,
    /// Tasks whose handler ran before one of its blockers had finished.
    too_early: Vec<String>,
}

/// `TEST-i` is blocked by `TEST-(i-7)` and `TEST-(i-13)` when they exist: a DAG many levels
/// deep that still leaves several tasks ready at once.
fn tasks() -> Vec<NewTask> {
    (1..=TASKS)
        .map(|i| NewTask {
            blocked_by: [7, 13]
                .iter()
                .filter(|&&k| i > k)
                .map(|k| format!("TEST-{:03}", i - k))
                .collect(),
            ..clients::task(&format!("TEST-{i:03}"), &format!("task {i}"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_workers_drain_500_dependent_tasks_each_completed_exactly_once() {
    let d = TestDaemon::start().await;
    let coord = clients::team(&d, "qa").await;
    coord.create_tasks(&tasks()).await.expect("500 tasks");

    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let stop = CancellationToken::new();
    let mut clients = Vec::new();
    for n in 1..=4 {
        let name = format!("tester-{n}");
        clients.push((clients::agent(&d, "qa", &name, Role::Tester).await, name));
    }
    let mut workers = Vec::new();
    for (client, name) in clients {
        let ledger = ledger.clone();
        let handler = move |task: Task, _ctx: TaskContext| {
            let (ledger, name) = (ledger.clone(), name.clone());
            async move {
                {
                    let mut l = ledger.lock().unwrap();
                    *l.runs.entry(task.id.clone()).or_default() += 1;
                    if !task.blocked_by.iter().all(|b| l.finished.contains(b)) {
                        l.too_early.push(task.id.clone());
                    }
                }
                tokio::task::yield_now().await;
                ledger.lock().unwrap().finished.insert(task.id.clone());
                Ok(json!({ "by": name }))
            }
        };
        let worker = Worker::new(client, handler)
            .lease(Duration::from_secs(10))
            .wait(Duration::from_secs(5));
        workers.push(tokio::spawn(worker.run_until(stop.clone())));
    }

    eventually(120, "all 500 handlers ran", || {
        let ledger = ledger.clone();
        async move { ledger.lock().unwrap().finished.len() == TASKS }
    })
    .await;
    stop.cancel();
    let mut total = WorkerStats::default();
    for w in workers {
        let stats = w.await.unwrap().expect("worker ran");
        assert!(stats.completed > 0, "every worker took part: {stats:?}");
        total.completed += stats.completed;
        total.failed += stats.failed;
        total.lost += stats.lost;
    }
    assert_eq!(
        (total.completed, total.failed, total.lost),
        (TASKS as u64, 0, 0)
    );

    {
        let ledger = ledger.lock().unwrap();
        assert!(
            ledger.too_early.is_empty(),
            "ran before their blockers: {:?}",
            ledger.too_early
        );
        let repeated: Vec<_> = ledger.runs.iter().filter(|(_, n)| **n != 1).collect();
        assert!(repeated.is_empty(), "run more than once: {repeated:?}");
        assert_eq!(ledger.runs.len(), TASKS);
    }

    let stored = coord
        .list_all_tasks(&TaskQuery {
            limit: Some(1000),
            ..TaskQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(stored.len(), TASKS);
    for t in &stored {
        assert_eq!(t.status, TaskStatus::Completed, "{} is {}", t.id, t.status);
        assert_eq!(t.attempts, 0, "{} never lost its lease", t.id);
        assert_eq!(
            t.result.as_ref().unwrap()["by"],
            t.claimed_by.clone().unwrap().as_str()
        );
    }
}
