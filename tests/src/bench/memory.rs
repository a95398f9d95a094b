//! `memory`: the daemon's RSS idle, with S open SSE streams, and after M stored messages.

use super::client::{add_agent, setup_team, BenchClient};
use super::daemon::BenchDaemon;
use super::stats::{Figures, Latencies};
use super::Sizes;
use serde_json::json;
use std::time::Instant;

pub async fn run(admin: &BenchClient, sizes: &Sizes, daemon: &BenchDaemon) -> Figures {
    let coord = setup_team(admin, "mem").await;
    let idle = daemon.rss();
    // Streams are limited per token (32 by default), so spread them over several watchers.
    let mut streams = Vec::new();
    let mut watcher = add_agent(admin, "mem", "watcher-0", "observer").await;
    for i in 0..sizes.subscribers {
        if i > 0 && i % 30 == 0 {
            watcher = add_agent(admin, "mem", &format!("watcher-{i}"), "observer").await;
        }
        let (http, auth) = watcher.raw();
        let res = http
            .get(format!("{}/v1/teams/mem/events", watcher.base))
            .header("authorization", auth)
            .send()
            .await
            .expect("stream");
        assert_eq!(res.status(), 200);
        streams.push(res);
    }
    let with_streams = daemon.rss();
    drop(streams);
    // Store messages through 64 concurrent posters.
    let started = Instant::now();
    let posters = 64.min(sizes.stored_messages.max(1));
    let per = sizes.stored_messages / posters;
    let mut handles = Vec::new();
    for p in 0..posters {
        let api = add_agent(admin, "mem", &format!("p{p}"), "tester").await;
        handles.push(tokio::spawn(async move {
            let mut lat = Latencies::default();
            for _ in 0..per {
                let t0 = Instant::now();
                api.post_ok(
                    "/v1/teams/mem/messages",
                    &json!({"to": "coordinator", "type": "impl_progress", "summary": "stored"}),
                    201,
                )
                .await;
                lat.push(t0.elapsed());
            }
            lat
        }));
    }
    let mut lat = Latencies::default();
    for h in handles {
        lat.extend(h.await.expect("poster"));
    }
    let elapsed = started.elapsed();
    let after_messages = daemon.rss();
    drop(coord);
    let mb = |b: u64| format!("{:.1} MB", b as f64 / 1e6);
    Figures::new("memory", "posts", per * posters, elapsed, &mut lat)
        .note("RSS idle", mb(idle))
        .note(
            &format!("RSS with {} open streams", sizes.subscribers),
            mb(with_streams),
        )
        .note(
            &format!("RSS after {} stored messages", per * posters),
            mb(after_messages),
        )
}
