//! `stress`: the attacks of issue 12 that cost memory or connections, against a real daemon,
//! with its RSS after each and whether a well-behaved client was still served:
//!
//! 1. requests with random bearer tokens (every one a cache miss): 401, then 429 per address;
//! 2. streams following `?to=` values that are not recipients (refused), and streams following
//!    real recipients opened and closed many times (their channels are freed);
//! 3. connections that never finish their request head, past `max_connections` (503), until
//!    `head_timeout_ms` closes them;
//! 4. JSON Patches of many small operations at the front of a large array (each shifts every
//!    element after it, on the writer): the largest the work budget allows, and one past it
//!    (413).

use super::client::{add_agent, setup_team, BenchClient};
use super::daemon::BenchDaemon;
use super::stats::{Figures, Latencies};
use super::Sizes;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Settings for this scenario's daemon: a small connection cap and a short head timeout, so the
/// connection flood overflows and then drains within the run.
pub const ENV: &[(&str, &str)] = &[
    ("HUDDLE_SERVER_MAX_CONNECTIONS", "1000"),
    ("HUDDLE_SERVER_HEAD_TIMEOUT_MS", "3000"),
];

const JUNK_REQUESTS: usize = 50_000;
const STREAM_ROUNDS: usize = 2_000;
const IDLE_CONNECTIONS: usize = 5_000;
/// Real recipients followed at once (under the 32 streams a token may hold).
const RECIPIENTS: usize = 30;

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// Whether the well-behaved agent gets its answer (on its pooled keep-alive connection).
async fn served(agent: &BenchClient) -> bool {
    let (http, auth) = agent.raw();
    matches!(
        http.get(format!("{}/v1/teams/stress/tasks", agent.base))
            .header("authorization", auth)
            .timeout(Duration::from_secs(10))
            .send()
            .await,
        Ok(r) if r.status() == 200
    )
}

pub async fn run(admin: &BenchClient, sizes: &Sizes, daemon: &BenchDaemon) -> Figures {
    let coord = setup_team(admin, "stress").await;
    let agent = add_agent(admin, "stress", "steady", "tester").await;
    let mut lat = Latencies::default();
    // Both tokens in use before the attacks: an address that keeps failing is refused before
    // any lookup, so a token's first use waits out the flood like any unknown token.
    // The admin token waits too, so the recipients are added now.
    assert!(served(&agent).await && served(&coord).await);
    for i in 0..RECIPIENTS {
        add_agent(admin, "stress", &format!("r{i}"), "observer").await;
    }
    let mut notes = vec![("RSS at start".to_string(), mib(daemon.rss()))];
    let started = Instant::now();

    // 1. Random tokens from many tasks at once.
    let workers = sizes.workers.clamp(1, 64);
    let per = JUNK_REQUESTS / workers;
    let handles: Vec<_> = (0..workers)
        .map(|w| {
            let client = reqwest::Client::new();
            let url = format!("{}/v1/teams/stress/tasks", admin.base);
            tokio::spawn(async move {
                let (mut unauthorized, mut limited) = (0usize, 0usize);
                for i in 0..per {
                    let token = format!("hud_{w:032}{i:032}");
                    match client.get(&url).bearer_auth(token).send().await {
                        Ok(r) if r.status() == 401 => unauthorized += 1,
                        Ok(r) if r.status() == 429 => limited += 1,
                        _ => {}
                    }
                }
                (unauthorized, limited)
            })
        })
        .collect();
    let (mut unauthorized, mut limited) = (0, 0);
    for h in handles {
        let (u, l) = h.await.expect("junk sender");
        unauthorized += u;
        limited += l;
    }
    let t0 = Instant::now();
    let ok = served(&agent).await;
    lat.push(t0.elapsed());
    notes.push((
        format!("{} random tokens", per * workers),
        format!("{unauthorized} × 401, {limited} × 429; agent served: {ok}"),
    ));
    notes.push(("RSS after random tokens".into(), mib(daemon.rss())));

    // 2. `?to=` streams: unknown recipients refused before any channel exists; real ones
    // opened together, then closed (their channels are freed).
    let (http, auth) = coord.raw();
    let mut refused = 0;
    for i in 0..STREAM_ROUNDS {
        let res = http
            .get(format!(
                "{}/v1/teams/stress/messages/stream?to=nobody-{i}",
                coord.base
            ))
            .header("authorization", auth)
            .send()
            .await
            .expect("stream");
        if res.status() == 400 {
            refused += 1;
        }
    }
    let mut open = Vec::new();
    for i in 0..RECIPIENTS {
        let name = format!("r{i}");
        let res = http
            .get(format!(
                "{}/v1/teams/stress/messages/stream?to={name}",
                coord.base
            ))
            .header("authorization", auth)
            .send()
            .await
            .expect("stream");
        if res.status() == 200 {
            open.push(res);
        }
    }
    let followed = open.len();
    drop(open);
    let t0 = Instant::now();
    let ok = served(&agent).await;
    lat.push(t0.elapsed());
    notes.push((
        format!("{STREAM_ROUNDS} ?to= streams to unknown recipients, {RECIPIENTS} to real ones"),
        format!("{refused} × 400, {followed} followed then closed; agent served: {ok}"),
    ));
    notes.push(("RSS after ?to= streams".into(), mib(daemon.rss())));

    // 3. Connections that never finish their head, while the agent keeps working.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let steady = {
        let agent = agent.clone();
        tokio::spawn(async move {
            let (mut ok, mut failed) = (0usize, 0usize);
            while !*stop_rx.borrow() {
                if served(&agent).await {
                    ok += 1;
                } else {
                    failed += 1;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            (ok, failed)
        })
    };
    let addr = admin.base.trim_start_matches("http://").to_string();
    let mut idle = Vec::new();
    for _ in 0..IDLE_CONNECTIONS {
        if let Ok(mut tcp) = TcpStream::connect(&addr).await {
            let _ = tcp
                .write_all(b"GET /v1/teams HTTP/1.1\r\nHost: x\r\n")
                .await;
            idle.push(tcp);
        }
    }
    let rss_during = daemon.rss();
    // Every connection is answered 503 at once or closed by the head timeout.
    let mut overflow = 0;
    let mut closed = 0;
    for tcp in &mut idle {
        let mut buf = Vec::new();
        if let Ok(Ok(_)) =
            tokio::time::timeout(Duration::from_secs(30), tcp.read_to_end(&mut buf)).await
        {
            if buf.starts_with(b"HTTP/1.1 503") {
                overflow += 1;
            } else {
                closed += 1;
            }
        }
    }
    drop(idle);
    let _ = stop_tx.send(true);
    let (steady_ok, steady_failed) = steady.await.expect("steady agent");
    // A new client (a fresh connection) is served again once the flood is gone.
    let fresh = BenchClient::new(&admin.base, "").with_token(&agent_token(&agent));
    let t0 = Instant::now();
    let ok_after = served(&fresh).await;
    lat.push(t0.elapsed());
    notes.push((
        format!("{IDLE_CONNECTIONS} connections that never finish their head"),
        format!(
            "{overflow} × 503 at once, {closed} closed by the head timeout; the agent meanwhile: {steady_ok} served, {steady_failed} not; a new client afterwards served: {ok_after}"
        ),
    ));
    notes.push(("RSS during the connection flood".into(), mib(rss_during)));

    // 4. Array shifts.
    let (allowed_ms, refused_ms) = shifting_patches(&coord).await;
    let t0 = Instant::now();
    let ok = served(&agent).await;
    lat.push(t0.elapsed());
    notes.push((
        format!(
            "{} removals at the front of {ARRAY_LEN} elements (the most the budget allows)",
            removals_within_budget()
        ),
        format!("{allowed_ms:.1} ms"),
    ));
    notes.push((
        "one removal more (past the work budget)".to_string(),
        format!("413 in {refused_ms:.1} ms; agent served: {ok}"),
    ));
    notes.push(("RSS at the end".into(), mib(daemon.rss())));

    let mut figures = Figures::new("stress", "checks", lat.0.len(), started.elapsed(), &mut lat);
    for (k, v) in notes {
        figures = figures.note(&k, v);
    }
    figures.note(
        "latency",
        "the well-behaved agent's request after each attack",
    )
}

/// Elements in the shared memory's array (about 1 MB, the default `[memory] max_bytes`).
const ARRAY_LEN: usize = 500_000;
/// A patch's work budget (`memory_patch.rs`): 16 × the default `[memory] max_bytes`.
const WORK_BUDGET: usize = 16 * 1_048_576;

/// The most removals at the array's front the work budget allows: each charges 2 per element
/// it shifts and the removed element's length (1).
fn removals_within_budget() -> usize {
    let (mut spent, mut n) = (0, 0);
    loop {
        let cost = 2 * (ARRAY_LEN - 1 - n) + 1;
        if spent + cost > WORK_BUDGET {
            return n;
        }
        spent += cost;
        n += 1;
    }
}

/// Times the allowed and the refused shifting patch, in ms.
async fn shifting_patches(coord: &BenchClient) -> (f64, f64) {
    let (http, auth) = coord.raw();
    let url = format!("{}/v1/teams/stress/memory", coord.base);
    let doc = format!("{{\"doc\":{{\"a\":[{}]}}}}", vec!["0"; ARRAY_LEN].join(","));
    let put = http
        .put(&url)
        .header("authorization", auth)
        .header("content-type", "application/json")
        .body(doc)
        .send()
        .await
        .expect("put memory");
    assert_eq!(
        put.status().as_u16(),
        200,
        "the array fits the memory limit"
    );
    let mut timed = Vec::new();
    let allowed = removals_within_budget();
    for (removals, status) in [(allowed, 200), (allowed + 1, 413)] {
        let patch = serde_json::json!(vec![
            serde_json::json!({"op": "remove", "path": "/a/0"});
            removals
        ]);
        let t0 = Instant::now();
        let res = http
            .patch(&url)
            .header("authorization", auth)
            .header("content-type", "application/json-patch+json")
            .body(patch.to_string())
            .send()
            .await
            .expect("patch memory");
        timed.push(t0.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(res.status().as_u16(), status, "{removals} removals");
    }
    (timed[0], timed[1])
}

/// The bearer token a client sends.
fn agent_token(client: &BenchClient) -> String {
    client
        .raw()
        .1
        .strip_prefix("Bearer ")
        .unwrap_or_default()
        .to_string()
}
