//! `wake`: idle workers long-poll; a coordinator creates tasks one at a time; the figure is the
//! time from the create's response to a worker holding the task.

use super::client::{add_agent, setup_team, BenchClient};
use super::stats::{Figures, Latencies};
use super::Sizes;
use serde_json::json;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

pub async fn run(admin: &BenchClient, sizes: &Sizes) -> Figures {
    let coord = setup_team(admin, "wake").await;
    let (got_tx, mut got_rx) = mpsc::unbounded_channel::<(String, Instant)>();
    let workers = sizes.workers.clamp(1, 64);
    let mut handles = Vec::new();
    for w in 0..workers {
        let api = add_agent(admin, "wake", &format!("w{w}"), "tester").await;
        let got = got_tx.clone();
        handles.push(tokio::spawn(async move {
            loop {
                let (status, task) = api
                    .post(
                        "/v1/teams/wake/tasks/claim",
                        &json!({"waitMs": 30000, "leaseMs": 3_600_000}),
                    )
                    .await
                    .expect("claim");
                if status == 204 {
                    continue;
                }
                let at = Instant::now();
                let id = task["id"].as_str().expect("id").to_string();
                let _ = got.send((id, at));
            }
        }));
    }
    // Let every worker park in its long poll before the first create.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut lat = Latencies::default();
    let jobs_before = admin.metric("huddle_writer_batch_size_sum").await;
    let known_empty_before = admin.metric("huddle_claims_known_empty_total").await;
    let started = Instant::now();
    for i in 0..sizes.wakes {
        let id = format!("TEST-{i}");
        coord
            .post_ok(
                "/v1/teams/wake/tasks",
                &json!({"id": id, "subject": "wake"}),
                201,
            )
            .await;
        let created = Instant::now();
        let (got, at) = got_rx.recv().await.expect("a worker took it");
        assert_eq!(got, id);
        lat.push(at.saturating_duration_since(created));
    }
    let elapsed = started.elapsed();
    for h in handles {
        h.abort();
    }
    let per_task = |n: f64| format!("{:.2}", n / sizes.wakes.max(1) as f64);
    let jobs = admin.metric("huddle_writer_batch_size_sum").await - jobs_before;
    let known_empty = admin.metric("huddle_claims_known_empty_total").await - known_empty_before;
    Figures::new("wake", "tasks", sizes.wakes, elapsed, &mut lat)
        .note("latency", "create response → worker holds the task")
        .note("idle workers", workers)
        .note("write jobs per task", per_task(jobs))
        .note(
            "claims answered without a write per task",
            per_task(known_empty),
        )
}
