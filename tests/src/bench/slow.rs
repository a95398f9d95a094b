//! `slow`: post latency for P posters, first alone, then with S SSE subscribers that never read
//! a byte (their streams are opened and left unread). Bounded hub buffers mean a stuck reader
//! never slows a writer; this measures that claim.

use super::client::{add_agent, setup_team, BenchClient};
use super::stats::{Figures, Latencies};
use super::Sizes;
use serde_json::json;
use std::time::Instant;

async fn post_round(posters: &[BenchClient], per_poster: usize, round: &str) -> (Latencies, f64) {
    let started = Instant::now();
    let handles: Vec<_> = posters
        .iter()
        .cloned()
        .map(|api| {
            let round = round.to_string();
            tokio::spawn(async move {
                let mut lat = Latencies::default();
                for i in 0..per_poster {
                    let body = json!({"to": "*", "type": "impl_progress", "summary": format!("{round} {i}"), "data": {"pad": "x".repeat(512)}});
                    let t0 = Instant::now();
                    api.post_ok("/v1/teams/slow/messages", &body, 201).await;
                    lat.push(t0.elapsed());
                }
                lat
            })
        })
        .collect();
    let mut lat = Latencies::default();
    for h in handles {
        lat.extend(h.await.expect("poster"));
    }
    let rate = (per_poster * posters.len()) as f64 / started.elapsed().as_secs_f64();
    (lat, rate)
}

pub async fn run(admin: &BenchClient, sizes: &Sizes) -> Figures {
    setup_team(admin, "slow").await;
    let posters_n = sizes.workers.clamp(1, 64);
    let mut posters = Vec::new();
    for p in 0..posters_n {
        posters.push(add_agent(admin, "slow", &format!("p{p}"), "tester").await);
    }
    let per_poster = (sizes.messages / posters_n).max(1);
    let (mut alone, alone_rate) = post_round(&posters, per_poster, "alone").await;
    // Open the stuck subscribers: streams of every message, never read.
    let mut stuck = Vec::new();
    let mut watcher = add_agent(admin, "slow", "stuck-0", "observer").await;
    for i in 0..sizes.subscribers {
        if i > 0 && i % 30 == 0 {
            watcher = add_agent(admin, "slow", &format!("stuck-{i}"), "observer").await;
        }
        let (http, auth) = watcher.raw();
        let res = http
            .get(format!("{}/v1/teams/slow/messages/stream", watcher.base))
            .header("authorization", auth)
            .send()
            .await
            .expect("stream");
        assert_eq!(res.status(), 200);
        stuck.push(res);
    }
    let (mut with_stuck, stuck_rate) = post_round(&posters, per_poster, "stuck").await;
    drop(stuck);
    let (a50, a99, amax) = alone.summary();
    let mut figures = Figures::new(
        "slow subscribers",
        "posts",
        per_poster * posters_n,
        std::time::Duration::from_secs_f64(per_poster as f64 * posters_n as f64 / stuck_rate),
        &mut with_stuck,
    );
    figures = figures
        .note(
            "latency",
            format!("posts with {} stuck subscribers", sizes.subscribers),
        )
        .note("without subscribers: posts/s", format!("{alone_rate:.0}"))
        .note(
            "without subscribers: p50/p99/max ms",
            format!("{a50:.2} / {a99:.2} / {amax:.2}"),
        );
    figures
}
