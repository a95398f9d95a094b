//! `mixed`: the load a real team produces, all at once. A coordinator creates tasks in batches
//! while W workers long-poll for them, complete each and post a `test_result` to one of S
//! subscribers (each following its own messages on `?to=`); meanwhile posters send progress
//! messages and writers merge-patch shared memory. The coordinator keeps at most one task per
//! worker outstanding, so the claim latency is the system's, not a backlog's. Reports tasks per
//! second and, per stream of work, its p99, so one kind of traffic starving another shows.

use super::client::{add_agent, setup_team, BenchClient};
use super::stats::{Figures, Latencies};
use super::Sizes;
use eventsource_stream::Eventsource;
use futures::StreamExt;
use serde::Deserialize;
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, Barrier, Notify};

const TEAM: &str = "mixed";
const POSTERS: usize = 8;
const MEMORY_WRITERS: usize = 4;
const CREATE_BATCH: usize = 50;

/// A few busy agents here stand for many: the per-token rate limit is lifted so it does not
/// shape the figures.
pub const ENV: &[(&str, &str)] = &[
    ("HUDDLE_LIMITS_REQUESTS_PER_MINUTE", "100000000"),
    // One team's whole load, past the per-team caps on agents and streams.
    ("HUDDLE_LIMITS_MAX_AGENTS_PER_TEAM", "100000"),
    ("HUDDLE_LIMITS_MAX_STREAMS_PER_TEAM", "100000"),
    ("HUDDLE_LIMITS_MAX_STREAMS_PER_ADDRESS", "100000"),
];

pub async fn run(admin: &BenchClient, sizes: &Sizes) -> Figures {
    let coord = setup_team(admin, TEAM).await;
    let base = Instant::now();
    let now_us = move || base.elapsed().as_micros() as u64;
    let (delivered_tx, mut delivered_rx) = mpsc::unbounded_channel::<Duration>();
    let subscribers = sizes.subscribers.max(1);
    let ready = Arc::new(Barrier::new(subscribers + 1));
    for s in 0..subscribers {
        let api = add_agent(admin, TEAM, &format!("sub{s}"), "observer").await;
        let (delivered_tx, ready) = (delivered_tx.clone(), ready.clone());
        let url = format!("{}/v1/teams/{TEAM}/messages/stream?to=sub{s}", api.base);
        tokio::spawn(async move {
            let (http, auth) = api.raw();
            let res = http.get(url).header("authorization", auth).send().await;
            let res = res.expect("stream");
            assert_eq!(res.status(), 200);
            ready.wait().await;
            let mut events = res.bytes_stream().eventsource();
            while let Some(Ok(event)) = events.next().await {
                let msg: Delivered = serde_json::from_str(&event.data).expect("json");
                let sent = Duration::from_micros(msg.data.sent_us);
                let _ = delivered_tx.send(base.elapsed().saturating_sub(sent));
            }
        });
    }
    drop(delivered_tx);
    ready.wait().await;

    let total = (sizes.tasks / 10).max(CREATE_BATCH);
    let done = Arc::new(AtomicUsize::new(0));
    let completed = Arc::new(Notify::new());
    let stop = Arc::new(AtomicBool::new(false));
    let posted = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();

    let mut workers = Vec::new();
    for w in 0..sizes.workers.max(1) {
        let api = add_agent(admin, TEAM, &format!("w{w}"), "tester").await;
        let (done, posted, completed) = (done.clone(), posted.clone(), completed.clone());
        workers.push(tokio::spawn(async move {
            let (mut waited, mut completes) = (Latencies::default(), Latencies::default());
            while done.load(Ordering::Relaxed) < total {
                let path = format!("/v1/teams/{TEAM}/tasks/claim");
                let (status, task) = api
                    .post(&path, &json!({"waitMs": 500}))
                    .await
                    .expect("claim");
                if status == 204 {
                    continue;
                }
                assert_eq!(status, 200, "claim: {task}");
                let created_us = task["metadata"]["createdUs"].as_u64().expect("createdUs");
                waited.push(Duration::from_micros(now_us().saturating_sub(created_us)));
                let id = task["id"].as_str().expect("id");
                let t0 = Instant::now();
                let path = format!("/v1/teams/{TEAM}/tasks/{id}/complete");
                api.post_ok(&path, &json!({"result": {"passed": 1}}), 200)
                    .await;
                completes.push(t0.elapsed());
                let n = done.fetch_add(1, Ordering::Relaxed);
                completed.notify_one();
                let message = json!({"type": "test_result", "to": format!("sub{}", n % subscribers),
                    "summary": format!("{id} passed"), "data": {"sentUs": now_us()}});
                api.post_ok(&format!("/v1/teams/{TEAM}/messages"), &message, 201)
                    .await;
                posted.fetch_add(1, Ordering::Relaxed);
            }
            (waited, completes)
        }));
    }

    let mut posters = Vec::new();
    for p in 0..POSTERS {
        let api = add_agent(admin, TEAM, &format!("poster{p}"), "tester").await;
        let (stop, posted) = (stop.clone(), posted.clone());
        posters.push(tokio::spawn(async move {
            let mut lat = Latencies::default();
            let mut i = p;
            while !stop.load(Ordering::Relaxed) {
                let message = json!({"type": "impl_progress", "to": format!("sub{}", i % subscribers),
                    "summary": "working", "data": {"sentUs": now_us()}});
                let t0 = Instant::now();
                api.post_ok(&format!("/v1/teams/{TEAM}/messages"), &message, 201).await;
                lat.push(t0.elapsed());
                posted.fetch_add(1, Ordering::Relaxed);
                i += POSTERS;
            }
            lat
        }));
    }

    let mut writers = Vec::new();
    for m in 0..MEMORY_WRITERS {
        let api = add_agent(admin, TEAM, &format!("memory{m}"), "tester").await;
        let stop = stop.clone();
        writers.push(tokio::spawn(async move {
            let mut lat = Latencies::default();
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let patch = json!({"executionResults": {format!("writer{m}"): {"run": i}}});
                let t0 = Instant::now();
                api.patch_memory(TEAM, &patch).await;
                lat.push(t0.elapsed());
                i += 1;
            }
            lat
        }));
    }

    let mut create = Latencies::default();
    let backlog = sizes.workers.max(CREATE_BATCH);
    for first in (0..total).step_by(CREATE_BATCH) {
        while first - done.load(Ordering::Relaxed).min(first) >= backlog {
            completed.notified().await;
        }
        let batch: Vec<_> = (first..(first + CREATE_BATCH).min(total))
            .map(|i| {
                json!({"id": format!("TEST-{i}"), "subject": "mixed",
                            "metadata": {"createdUs": now_us()}})
            })
            .collect();
        let t0 = Instant::now();
        coord
            .post_ok(&format!("/v1/teams/{TEAM}/tasks"), &json!(batch), 201)
            .await;
        create.push(t0.elapsed());
    }

    let (mut waited, mut completes) = (Latencies::default(), Latencies::default());
    for w in workers {
        let (a, b) = w.await.expect("worker");
        waited.extend(a);
        completes.extend(b);
    }
    let elapsed = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    let mut posts = Latencies::default();
    for p in posters {
        posts.extend(p.await.expect("poster"));
    }
    let mut patches = Latencies::default();
    for m in writers {
        patches.extend(m.await.expect("memory writer"));
    }
    let sent = posted.load(Ordering::Relaxed);
    let mut delivery = Latencies::default();
    while delivery.0.len() < sent {
        match tokio::time::timeout(Duration::from_secs(30), delivered_rx.recv()).await {
            Ok(Some(d)) => delivery.push(d),
            _ => panic!(
                "only {} of {sent} messages were delivered",
                delivery.0.len()
            ),
        }
    }
    let secs = elapsed.as_secs_f64();
    let p99 = |lat: &mut Latencies| lat.summary().1;
    let per_s = |n: usize| format!("{:.0}", n as f64 / secs);
    Figures::new("mixed", "tasks", total, elapsed, &mut waited)
        .note("latency", "task created → claimed")
        .note("workers", sizes.workers.max(1))
        .note("subscribers", subscribers)
        .note("complete p99 ms", format!("{:.2}", p99(&mut completes)))
        .note(
            "create batch of 50 p99 ms",
            format!("{:.2}", p99(&mut create)),
        )
        .note("messages/s", per_s(sent))
        .note("post p99 ms", format!("{:.2}", p99(&mut posts)))
        .note("post→delivery p99 ms", format!("{:.2}", p99(&mut delivery)))
        .note("memory patches/s", per_s(patches.0.len()))
        .note("memory patch p99 ms", format!("{:.2}", p99(&mut patches)))
}

/// The only part of a delivered message a subscriber reads.
#[derive(Deserialize)]
struct Delivered {
    data: SentAt,
}

#[derive(Deserialize)]
struct SentAt {
    #[serde(rename = "sentUs")]
    sent_us: u64,
}
