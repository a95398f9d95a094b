//! The daemon is stopped and restarted while workers and a `huddle msg tail` run: the workers
//! reconnect and finish every task, and the tail resumes without gaps or repeats.

use huddle_sdk::wire::{NewTask, PostMessage, Role, Task, TaskStatus};
use huddle_sdk::{HandlerResult, MessageQuery, TaskContext, TaskQuery, Worker, WorkerStats};
use huddle_tests::cli::Huddle;
use huddle_tests::clients;
use huddle_tests::{eventually, TestDaemon};
use serde_json::json;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn batch(from: usize, to: usize) -> Vec<NewTask> {
    (from..=to)
        .map(|i| clients::task(&format!("TEST-{i:03}"), "work"))
        .collect()
}

async fn note(client: &huddle_sdk::Client, summary: String) {
    let post = PostMessage {
        to: "*".into(),
        kind: "note".into(),
        summary,
        data: json!({}),
    };
    client.post_message(&post).await.expect("posted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_and_a_tail_ride_through_a_daemon_restart_losing_nothing() {
    let d = TestDaemon::start().await;
    let coord_api = d.team("qa").await;
    let coord = huddle_sdk::Client::new(&d.url, &coord_api.token)
        .unwrap()
        .with_team("qa");
    let mut tail = Huddle::new(&d.url, &coord_api.token, "qa").spawn(&["msg", "tail", "--json"]);

    let handled = Arc::new(Mutex::new(HashSet::new()));
    let stop = CancellationToken::new();
    let mut workers = Vec::new();
    for n in 1..=4 {
        let client = clients::agent(&d, "qa", &format!("tester-{n}"), Role::Tester).await;
        let handled = handled.clone();
        let handler = move |task: Task, _ctx: TaskContext| {
            let handled = handled.clone();
            async move {
                handled.lock().unwrap().insert(task.id.clone());
                HandlerResult::Ok(json!({ "done": task.id }))
            }
        };
        let worker = Worker::new(client, handler)
            .lease(Duration::from_secs(2))
            .wait(Duration::from_secs(5))
            .max_backoff(Duration::from_millis(300));
        workers.push(tokio::spawn(worker.run_until(stop.clone())));
    }

    coord.create_tasks(&batch(1, 100)).await.unwrap();
    for i in 1..=10 {
        note(&coord, format!("before restart {i}")).await;
    }
    let mut tailed = Vec::new();
    for _ in 0..10 {
        tailed.push(tail.stdout.next_json().await["seq"].as_i64().unwrap());
    }
    eventually(60, "workers are busy", || {
        let handled = handled.clone();
        async move { handled.lock().unwrap().len() >= 20 }
    })
    .await;

    let d = d.restart().await;
    coord
        .create_tasks(&batch(101, 200))
        .await
        .expect("created after the restart");
    for i in 1..=10 {
        note(&coord, format!("after restart {i}")).await;
    }
    for _ in 0..10 {
        tailed.push(tail.stdout.next_json().await["seq"].as_i64().unwrap());
    }
    let stored: Vec<i64> = coord
        .list_all_messages(&MessageQuery::default())
        .await
        .unwrap()
        .iter()
        .map(|m| m.seq)
        .collect();
    assert_eq!(
        tailed, stored,
        "the tail shows every message once, in order"
    );
    assert_eq!(stored.len(), 20);
    note(&coord, "the last word".into()).await;
    let last = tail.stdout.next_json().await;
    assert_eq!(
        (last["seq"].as_i64(), last["summary"].as_str()),
        (Some(21), Some("the last word")),
        "nothing repeated"
    );

    eventually(120, "all 200 tasks completed", || {
        let coord = coord.clone();
        async move {
            let done = coord
                .list_tasks(&TaskQuery {
                    status: Some(TaskStatus::Completed),
                    limit: Some(1000),
                    ..TaskQuery::default()
                })
                .await;
            done.is_ok_and(|page| page.tasks.len() == 200)
        }
    })
    .await;
    stop.cancel();
    let mut total = WorkerStats::default();
    for w in workers {
        let stats = w.await.unwrap().expect("worker stopped cleanly");
        total.completed += stats.completed;
        total.failed += stats.failed;
    }
    assert_eq!(total.failed, 0);
    assert_eq!(total.completed, 200, "each task completed once: {total:?}");
    assert_eq!(handled.lock().unwrap().len(), 200, "every task was handled");
    let _ = tail.child.start_kill();
    drop(d);
}
