//! `isolation`'s stream fan-out phase: one team's observers hold every stream the caps let them
//! (`max_streams_per_token` each, `max_streams_per_team` in all) and read every message its
//! posters send, while the victim claims a task and posts a message, one after another. The
//! victim's claim and write p99, quiet and during the fan-out, show what the fan-out costs
//! another team.

use super::client::{add_agent, BenchClient};
use super::stats::Latencies;
use futures::StreamExt;
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Claims (and then completes, untimed) a task and posts a message, `samples` times: the
/// claim's latency and the post's.
pub async fn victim_claims(worker: &BenchClient, samples: usize) -> (Latencies, Latencies) {
    let (mut claims, mut writes) = (Latencies::default(), Latencies::default());
    let message = json!({"to": "*", "type": "status", "summary": "claimed"});
    for _ in 0..samples {
        let t0 = Instant::now();
        let task = worker
            .post_ok(
                "/v1/teams/victim/tasks/claim",
                &json!({"prefixes": ["VC"]}),
                200,
            )
            .await;
        claims.push(t0.elapsed());
        let id = task["id"].as_str().expect("claimed task id");
        worker
            .post_ok(
                &format!("/v1/teams/victim/tasks/{id}/complete"),
                &json!({}),
                200,
            )
            .await;
        let t0 = Instant::now();
        worker
            .post_ok("/v1/teams/victim/messages", &message, 201)
            .await;
        writes.push(t0.elapsed());
    }
    (claims, writes)
}

/// What the fan-out phase measured.
pub struct FanOut {
    pub claims: Latencies,
    pub writes: Latencies,
    /// Streams the daemon accepted, and how many were asked for.
    pub streams_open: usize,
    pub streams_asked: usize,
    /// Messages the noisy posters sent, and frames the observers read.
    pub posted: usize,
    pub delivered: usize,
}

/// Opens `observers × per_observer` message streams in team `noisy` (what the caps refuse is
/// counted, not retried), starts `posters` posting there, and measures the victim meanwhile.
pub async fn fan_out(
    admin: &BenchClient,
    worker: &BenchClient,
    samples: usize,
    observers: usize,
    per_observer: usize,
    posters: usize,
) -> FanOut {
    let stop = Arc::new(AtomicBool::new(false));
    let delivered = Arc::new(AtomicUsize::new(0));
    let mut readers = Vec::new();
    let mut open = 0;
    for o in 0..observers {
        let observer = add_agent(admin, "noisy", &format!("fan{o}"), "observer").await;
        for _ in 0..per_observer {
            let (http, auth) = observer.raw();
            let res = http
                .get(format!(
                    "{}/v1/teams/noisy/messages/stream",
                    observer.base()
                ))
                .header("authorization", auth)
                .send()
                .await
                .expect("open a stream");
            if res.status().as_u16() != 200 {
                continue;
            }
            open += 1;
            let (stop, delivered) = (stop.clone(), delivered.clone());
            readers.push(tokio::spawn(async move {
                let mut frames = res.bytes_stream();
                while !stop.load(Ordering::Relaxed) {
                    match tokio::time::timeout(Duration::from_millis(200), frames.next()).await {
                        Ok(Some(Ok(chunk))) => {
                            let n = chunk.windows(6).filter(|w| w == b"event:").count();
                            delivered.fetch_add(n, Ordering::Relaxed);
                        }
                        Ok(_) => break,
                        Err(_) => {}
                    }
                }
            }));
        }
    }
    let mut senders = Vec::new();
    for p in 0..posters {
        let poster = add_agent(admin, "noisy", &format!("herald{p}"), "tester").await;
        let stop = stop.clone();
        senders.push(tokio::spawn(async move {
            let message = json!({"to": "*", "type": "impl_progress", "summary": "x".repeat(200)});
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                poster
                    .post_ok("/v1/teams/noisy/messages", &message, 201)
                    .await;
                n += 1;
            }
            n
        }));
    }
    // Let the fan-out build up before the victim starts.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (claims, writes) =
        super::isolation::apart(
            worker,
            move |w| async move { victim_claims(&w, samples).await },
        )
        .await;
    stop.store(true, Ordering::Relaxed);
    let mut posted = 0;
    for s in senders {
        posted += s.await.expect("poster");
    }
    for r in readers {
        r.abort();
    }
    FanOut {
        claims,
        writes,
        streams_open: open,
        streams_asked: observers * per_observer,
        posted,
        delivered: delivered.load(Ordering::Relaxed),
    }
}
