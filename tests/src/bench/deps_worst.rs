//! `deps-worst`: the heaviest dependency requests the limits allow, timed, with another team's
//! write latency while each runs (every team shares one writer).
//!
//! - a batch carrying `max_blocked_by_per_request` edges (5,000 by default): 50 new tasks, each
//!   blocked by 100 tasks at the end of a 1,000-long chain;
//! - a patch adding `max_blocked_by` (100) blockers from the tail of one 1,000-long chain to the
//!   head of another, so the cycle check meets long paths on both sides;
//! - wide graphs: a "ladder" of 100 tasks per level, each blocked by the whole level before.
//!   A patch whose new blockers reach 20,000 of its edges (`max_dependency_walk`) is the most
//!   the cycle check may read; one reaching 30,000 is refused with 413 after reading the budget.

use super::client::{create_tasks, setup_team, BenchClient};
use super::stats::{Figures, Latencies};
use super::Sizes;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const CHAIN: usize = 1_000;
const PER_TASK: usize = 100;
const EDGES: usize = 5_000;

fn chain(prefix: &str) -> Vec<Value> {
    (1..=CHAIN)
        .map(|i| {
            let blocked_by: Vec<String> = if i == 1 {
                vec![]
            } else {
                vec![format!("{prefix}-{:03}", i - 1)]
            };
            json!({"id": format!("{prefix}-{i:03}"), "subject": "link", "blockedBy": blocked_by})
        })
        .collect()
}

/// Times `request` while another team posts messages one after another; returns the request's
/// time and the other team's slowest write during it.
async fn timed<F>(other: &BenchClient, request: F) -> (Duration, Duration)
where
    F: std::future::Future<Output = ()>,
{
    let (stop_tx, mut stop_rx) = tokio::sync::oneshot::channel::<()>();
    let other = other.clone();
    let writer = tokio::spawn(async move {
        let mut worst = Duration::ZERO;
        let body = json!({"to": "*", "type": "impl_progress", "summary": "still here"});
        loop {
            let t0 = Instant::now();
            other.post_ok("/v1/teams/other/messages", &body, 201).await;
            worst = worst.max(t0.elapsed());
            if stop_rx.try_recv().is_ok() {
                return worst;
            }
        }
    });
    let t0 = Instant::now();
    request.await;
    let took = t0.elapsed();
    let _ = stop_tx.send(());
    (took, writer.await.expect("other team's writer"))
}

pub async fn run(admin: &BenchClient, _sizes: &Sizes) -> Figures {
    let coord = setup_team(admin, "worst").await;
    let other = setup_team(admin, "other").await;
    create_tasks(&coord, "worst", chain("AAA")).await;
    create_tasks(&coord, "worst", chain("BBB")).await;
    let mut lat = Latencies::default();

    let tail: Vec<String> = (CHAIN - PER_TASK + 1..=CHAIN)
        .map(|i| format!("AAA-{i:03}"))
        .collect();
    let batch: Vec<Value> = (0..EDGES / PER_TASK)
        .map(|i| json!({"prefix": "FAN", "subject": format!("fan {i}"), "blockedBy": tail}))
        .collect();
    let (batch_took, batch_other) = timed(&other, async {
        coord
            .post_ok("/v1/teams/worst/tasks", &Value::Array(batch), 201)
            .await;
    })
    .await;
    lat.push(batch_took);

    let b_tail: Vec<String> = (CHAIN - PER_TASK + 1..=CHAIN)
        .map(|i| format!("BBB-{i:03}"))
        .collect();
    let (patch_took, patch_other) = timed(&other, async {
        let (http, auth) = coord.raw();
        let status = http
            .patch(format!("{}/v1/teams/worst/tasks/AAA-001", coord.base))
            .header("authorization", auth)
            .header("content-type", "application/json")
            .body(json!({"addBlockedBy": b_tail}).to_string())
            .send()
            .await
            .expect("patch")
            .status()
            .as_u16();
        assert_eq!(status, 200, "the patch answered {status}");
    })
    .await;
    lat.push(patch_took);

    ladder(&coord).await;
    create_tasks(
        &coord,
        "worst",
        vec![
            json!({"id": "HEAD-001", "subject": "head"}),
            json!({"id": "HEAD-002", "subject": "dependent", "blockedBy": ["HEAD-001"]}),
        ],
    )
    .await;
    // Refused first: HEAD-001 then has no blocker, so only the walk budget can refuse it.
    let (refused_took, refused_other) = timed(&other, async {
        assert_eq!(patch_head(&coord, 3).await, 413, "30,000 edges are refused");
    })
    .await;
    lat.push(refused_took);
    let (walk_took, walk_other) = timed(&other, async {
        assert_eq!(
            patch_head(&coord, 2).await,
            200,
            "20,000 edges are within the budget"
        );
    })
    .await;
    lat.push(walk_took);

    let ms = |d: Duration| format!("{:.0} ms", d.as_secs_f64() * 1000.0);
    Figures::new(
        "deps-worst",
        "requests",
        4,
        batch_took + patch_took + walk_took + refused_took,
        &mut lat,
    )
    .note(
        &format!(
            "batch of {} edges ({} tasks × {PER_TASK} chain blockers)",
            EDGES,
            EDGES / PER_TASK
        ),
        ms(batch_took),
    )
    .note("  another team's slowest write meanwhile", ms(batch_other))
    .note(
        &format!("patch adding {PER_TASK} blockers between two {CHAIN}-long chains"),
        ms(patch_took),
    )
    .note("  another team's slowest write meanwhile", ms(patch_other))
    .note(
        &format!("patch adding {WIDTH} blockers reaching 20,000 ladder edges (the walk budget)"),
        ms(walk_took),
    )
    .note("  another team's slowest write meanwhile", ms(walk_other))
    .note(
        &format!("patch adding {WIDTH} blockers reaching 30,000 ladder edges (refused, 413)"),
        ms(refused_took),
    )
    .note(
        "  another team's slowest write meanwhile",
        ms(refused_other),
    )
}

const WIDTH: usize = 100;
const LEVELS: usize = 4;

fn rung(level: usize, i: usize) -> String {
    format!("LAD-{:04}", level * WIDTH + i)
}

/// `LEVELS` levels of `WIDTH` tasks, each blocked by every task of the level before, in
/// requests of 5,000 edges (`max_blocked_by_per_request`).
async fn ladder(coord: &BenchClient) {
    for level in 0..LEVELS {
        let blockers: Vec<String> = match level {
            0 => vec![],
            _ => (0..WIDTH).map(|i| rung(level - 1, i)).collect(),
        };
        let tasks: Vec<Value> = (0..WIDTH)
            .map(|i| json!({"id": rung(level, i), "subject": "rung", "blockedBy": blockers}))
            .collect();
        for chunk in tasks.chunks(50) {
            coord
                .post_ok("/v1/teams/worst/tasks", &Value::Array(chunk.to_vec()), 201)
                .await;
        }
    }
}

/// HEAD-001 (which has a dependent) blocked by every task of the ladder's `level`; the status.
async fn patch_head(coord: &BenchClient, level: usize) -> u16 {
    let blockers: Vec<String> = (0..WIDTH).map(|i| rung(level, i)).collect();
    let (http, auth) = coord.raw();
    http.patch(format!("{}/v1/teams/worst/tasks/HEAD-001", coord.base))
        .header("authorization", auth)
        .header("content-type", "application/json")
        .body(json!({"addBlockedBy": blockers}).to_string())
        .send()
        .await
        .expect("patch")
        .status()
        .as_u16()
}
