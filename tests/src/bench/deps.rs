//! `deps`: tasks in chains and diamonds; every task completes, and never before its blockers.

use super::client::{add_agent, create_tasks, setup_team, BenchClient};
use super::stats::{Figures, Latencies};
use super::Sizes;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Groups of 10: a chain of 5 (1←2←3←4←5) and a diamond of 5 (6 ← 7,8,9 ← 10).
fn graph(n: usize) -> Vec<Value> {
    let mut tasks = Vec::with_capacity(n);
    for g in 0..n / 10 {
        let id = |k: usize| format!("TEST-{}", g * 10 + k);
        for k in 1..=10 {
            let blocked_by: Vec<String> = match k {
                2..=5 => vec![id(k - 1)],
                7..=9 => vec![id(6)],
                10 => vec![id(7), id(8), id(9)],
                _ => vec![],
            };
            tasks.push(json!({"id": id(k), "subject": "bench", "blockedBy": blocked_by}));
        }
    }
    tasks
}

pub async fn run(admin: &BenchClient, sizes: &Sizes) -> Figures {
    let n = (sizes.tasks / 10).max(10) / 10 * 10;
    let coord = setup_team(admin, "deps").await;
    let tasks = graph(n);
    let blockers: HashMap<String, Vec<String>> = tasks
        .iter()
        .map(|t| {
            let b = t["blockedBy"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            (t["id"].as_str().unwrap().to_string(), b)
        })
        .collect();
    create_tasks(&coord, "deps", tasks).await;
    let done: Arc<Mutex<HashMap<String, (usize, usize)>>> = Arc::default();
    let order = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut handles = Vec::new();
    for w in 0..sizes.workers {
        let api = add_agent(admin, "deps", &format!("w{w}"), "tester").await;
        let (done, order, total) = (done.clone(), order.clone(), n);
        handles.push(tokio::spawn(async move {
            let mut lat = Latencies::default();
            loop {
                if done.lock().unwrap().len() >= total {
                    break;
                }
                let t0 = Instant::now();
                let (status, task) = api
                    .post("/v1/teams/deps/tasks/claim", &json!({"waitMs": 200}))
                    .await
                    .expect("claim");
                if status == 204 {
                    continue;
                }
                let id = task["id"].as_str().expect("id").to_string();
                // Ticks on one counter: taken after the claim answered, and before the complete
                // is sent. A blocker's complete-sent tick must precede its dependent's claimed
                // tick, whatever the scheduling.
                let claimed = order.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let sent = order.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                api.post_ok(
                    &format!("/v1/teams/deps/tasks/{id}/complete"),
                    &json!({}),
                    200,
                )
                .await;
                assert!(
                    done.lock()
                        .unwrap()
                        .insert(id.clone(), (claimed, sent))
                        .is_none(),
                    "{id} completed twice"
                );
                lat.push(t0.elapsed());
            }
            lat
        }));
    }
    let started = Instant::now();
    let mut lat = Latencies::default();
    for h in handles {
        lat.extend(h.await.expect("worker"));
    }
    let elapsed = started.elapsed();
    let done = done.lock().unwrap();
    assert_eq!(done.len(), n, "every task completed");
    for (id, bs) in &blockers {
        for b in bs {
            assert!(
                done[b].1 < done[id].0,
                "{id} was claimed before its blocker {b} was completed"
            );
        }
    }
    Figures::new("deps", "tasks", n, elapsed, &mut lat).note(
        "graph",
        format!("{} chains of 5 + {} diamonds of 5", n / 10, n / 10),
    )
}
