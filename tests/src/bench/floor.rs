//! `floor`: what an HTTP request costs this machine with no store behind it (`GET /healthz`),
//! one at a time and from many clients at once, through the same client as every scenario.
//! Any scenario's figures sit above it: `wake` makes three requests per task one after
//! another, unbatched `claim` two per task at full concurrency.

use super::client::BenchClient;
use super::daemon::BenchDaemon;
use super::stats::{Figures, Latencies};
use super::Sizes;
use std::time::Instant;

pub async fn run(admin: &BenchClient, sizes: &Sizes, daemon: &BenchDaemon) -> Figures {
    let (http, _) = admin.raw();
    let url = format!("{}/healthz", admin.base());

    let sequential = (sizes.tasks / 5).max(1);
    let mut lat = Latencies::default();
    let cpu = daemon.cpu_seconds();
    let started = Instant::now();
    for _ in 0..sequential {
        let t0 = Instant::now();
        health_check(http, &url).await;
        lat.push(t0.elapsed());
    }
    let elapsed = started.elapsed();
    let sequential_cpu = cpu_per_request(daemon.cpu_seconds() - cpu, sequential);

    let clients = sizes.workers.max(1);
    let each = (sizes.tasks / clients).max(1);
    let cpu = daemon.cpu_seconds();
    let concurrent_started = Instant::now();
    let handles: Vec<_> = (0..clients)
        .map(|_| {
            let (http, url) = (http.clone(), url.clone());
            tokio::spawn(async move {
                for _ in 0..each {
                    health_check(&http, &url).await;
                }
            })
        })
        .collect();
    for h in handles {
        h.await.expect("a client");
    }
    let concurrent_elapsed = concurrent_started.elapsed();
    let concurrent_cpu = cpu_per_request(daemon.cpu_seconds() - cpu, clients * each);
    let concurrent_rate = (clients * each) as f64 / concurrent_elapsed.as_secs_f64().max(1e-9);

    Figures::new("floor", "requests", sequential, elapsed, &mut lat)
        .note("latency", "GET /healthz, one at a time")
        .note("daemon CPU per request", sequential_cpu)
        .note(
            &format!("{clients} clients at once"),
            format!("{concurrent_rate:.0} requests/s, {concurrent_cpu} daemon CPU per request"),
        )
}

async fn health_check(http: &reqwest::Client, url: &str) {
    let res = http.get(url).send().await.expect("GET /healthz");
    assert_eq!(res.status().as_u16(), 200, "GET /healthz");
    res.bytes().await.expect("GET /healthz body");
}

fn cpu_per_request(cpu_seconds: f64, requests: usize) -> String {
    format!(
        "{:.0} µs",
        cpu_seconds.max(0.0) * 1e6 / requests.max(1) as f64
    )
}
