//! `attacks`: what one team (or one client address) can do to another team's latency, in one
//! run — the victim's write and read p99 while quiet, then while the attack runs, as ratios:
//!
//! 1. a small team's search of 16 one-letter words beside a large team's `--messages` indexed
//!    messages (its own latency: the search costs in proportion to its team's messages);
//! 2. a search storm: 16 clients of the large team searching one-letter words;
//! 3. a slow export: the large team's export read at about 1 KiB/s;
//! 4. a reconnect storm: 24 loops from another loopback address reconnecting as fast as their
//!    connections are closed, while the victim opens a new connection per request;
//! 5. an import of the large team's file, and 6. its deletion (a chunk per writer job).

use super::client::{setup_team, BenchClient};
use super::isolation::{self, apart};
use super::stats::{Figures, Latencies};
use super::Sizes;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// Settings for this scenario's daemon: a connection cap the reconnect storm can fill.
pub const ENV: &[(&str, &str)] = &[
    ("HUDDLE_SERVER_MAX_CONNECTIONS", "256"),
    ("HUDDLE_SERVER_MAX_CONNECTIONS_PER_ADDRESS", "64"),
    ("HUDDLE_SERVER_HEAD_TIMEOUT_MS", "2000"),
];

const SAMPLES: usize = 200;
const STORM_CLIENTS: usize = 16;
const RECONNECT_LOOPS: usize = 320;

/// The victim's samples ([`isolation::victim`]) on a runtime of its own.
async fn victim(client: &BenchClient, until: Option<Arc<AtomicBool>>) -> (Latencies, Latencies) {
    apart(client, move |c| async move {
        isolation::victim(&c, SAMPLES, until).await
    })
    .await
}

/// The victim's write and read p99 while `attack` runs until told to stop.
async fn during_storm<Fut>(
    client: &BenchClient,
    attack: impl FnOnce(Arc<AtomicBool>) -> Fut,
) -> (f64, f64)
where
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let stop = Arc::new(AtomicBool::new(false));
    let attack = tokio::spawn(attack(stop.clone()));
    // Let the attack build up before the victim starts.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (mut w, mut r) = victim(client, None).await;
    stop.store(true, Ordering::Relaxed);
    attack.await.expect("the attack");
    (w.summary().1, r.summary().1)
}

/// The victim's write and read p99 while `operation` runs, and how long it took.
async fn during_operation<Fut>(client: &BenchClient, operation: Fut) -> (f64, f64, f64)
where
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let done = Arc::new(AtomicBool::new(false));
    let flag = done.clone();
    let t0 = Instant::now();
    let op = tokio::spawn(async move {
        operation.await;
        let took = t0.elapsed();
        flag.store(true, Ordering::Relaxed);
        took
    });
    let (mut w, mut r) = victim(client, Some(done)).await;
    let took = op.await.expect("the operation");
    (w.summary().1, r.summary().1, took.as_secs_f64() * 1000.0)
}

async fn post_messages(api: &BenchClient, team: &str, count: usize) {
    let posters = 8;
    let mut handles = Vec::new();
    for p in 0..posters {
        let api = api.clone();
        let path = format!("/v1/teams/{team}/messages/batch");
        handles.push(tokio::spawn(async move {
            for batch in (p * 500..count).step_by(posters * 500) {
                let messages: Vec<Value> = (batch..(batch + 500).min(count))
                    .map(|n| {
                        json!({"to": "coordinator", "type": "test_result",
                               "summary": format!("run {n}: average failed on TEST-{:04}", n % 2000),
                               "data": {"taskId": format!("TEST-{:04}", n % 2000), "n": n}})
                    })
                    .collect();
                api.post_ok(&path, &json!({ "messages": messages }), 201).await;
            }
        }));
    }
    for h in handles {
        h.await.expect("poster");
    }
}

async fn search(api: &BenchClient, team: &str, q: &str) -> Duration {
    let (http, auth) = api.raw();
    let t0 = Instant::now();
    let res = http
        .get(format!(
            "{}/v1/teams/{team}/messages/search?q={q}&limit=20",
            api.base
        ))
        .header("authorization", auth)
        .send()
        .await
        .expect("search");
    assert_eq!(res.status().as_u16(), 200);
    let _ = res.bytes().await;
    t0.elapsed()
}

pub async fn run(admin: &BenchClient, sizes: &Sizes) -> Figures {
    let started = Instant::now();
    let victim_team = setup_team(admin, "victim").await;
    victim_team
        .post_ok(
            "/v1/teams/victim/tasks",
            &json!((0..50)
                .map(|i| json!({"prefix": "V", "subject": format!("v{i}")}))
                .collect::<Vec<_>>()),
            201,
        )
        .await;
    let large = setup_team(admin, "large").await;
    let small = setup_team(admin, "small").await;
    let stored = sizes.messages.max(1_000);
    post_messages(&large, "large", stored).await;
    post_messages(&small, "small", 50).await;
    let ms = |v: f64| format!("{v:.1} ms");
    let ratio = |attack: f64, quiet: f64| format!("{:.1}×", attack / quiet.max(1e-3));
    let mut notes: Vec<(String, String)> = Vec::new();

    let (mut qw, mut qr) = victim(&victim_team, None).await;
    let (qw, qr) = (qw.summary().1, qr.summary().1);
    notes.push((
        "victim write / read p99 quiet".into(),
        format!("{} / {}", ms(qw), ms(qr)),
    ));

    // 1. The small team's own search, with the large team's messages indexed.
    let one_letters = "a+b+c+d+e+f+g+h+i+j+k+l+m+n+o+p";
    let t0 = Instant::now();
    search(&large, "large", "a").await;
    let indexed = t0.elapsed();
    let mut small_searches = Latencies::default();
    for _ in 0..50 {
        small_searches.push(search(&small, "small", one_letters).await);
    }
    let (p50, p99, _) = small_searches.summary();
    notes.push((
        format!("small team (50 messages) searching 16 one-letter words beside {stored} indexed"),
        format!(
            "p50 {} / p99 {} (indexing the large team took {})",
            ms(p50),
            ms(p99),
            ms(indexed.as_secs_f64() * 1000.0)
        ),
    ));

    // 2. A search storm by the large team.
    let searched = Arc::new(AtomicUsize::new(0));
    let (w, r) = during_storm(&victim_team, |stop| {
        let (large, searched) = (large.clone(), searched.clone());
        async move {
            let mut storm = Vec::new();
            for i in 0..STORM_CLIENTS {
                let (large, stop, searched) = (large.clone(), stop.clone(), searched.clone());
                storm.push(tokio::spawn(async move {
                    let letters = ["a", "r", "t+f", "e+o", "0", "1+2"];
                    while !stop.load(Ordering::Relaxed) {
                        search(&large, "large", letters[i % letters.len()]).await;
                        searched.fetch_add(1, Ordering::Relaxed);
                    }
                }));
            }
            for s in storm {
                s.await.expect("storm client");
            }
        }
    })
    .await;
    notes.push((
        format!("victim write / read p99 while {STORM_CLIENTS} clients of the large team search"),
        format!(
            "{} ({}) / {} ({}); {} searches",
            ms(w),
            ratio(w, qw),
            ms(r),
            ratio(r, qr),
            searched.load(Ordering::Relaxed)
        ),
    ));

    // 3. A slow export reader.
    let (w, r) = during_storm(&victim_team, |stop| {
        let admin = admin.clone();
        async move { slow_export(&admin, stop).await }
    })
    .await;
    notes.push((
        "victim write / read p99 while the large team's export is read at ~1 KiB/s".into(),
        format!(
            "{} ({}) / {} ({})",
            ms(w),
            ratio(w, qw),
            ms(r),
            ratio(r, qr)
        ),
    ));

    // 4. A reconnect storm from another address; the victim opens a connection per request.
    let refused_attacker = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let addr: std::net::SocketAddr = victim_team
        .base
        .trim_start_matches("http://")
        .parse()
        .expect("the daemon's address");
    let mut loops = Vec::new();
    for _ in 0..RECONNECT_LOOPS {
        let (stop, refused) = (stop.clone(), refused_attacker.clone());
        loops.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let socket = TcpSocket::new_v4().expect("socket");
                socket
                    .bind("127.0.0.2:0".parse().unwrap())
                    .expect("bind 127.0.0.2");
                let Ok(mut tcp) = socket.connect(addr).await else {
                    continue;
                };
                let mut out = Vec::new();
                let _ = tcp.read_to_end(&mut out).await;
                if out.starts_with(b"HTTP/1.1 503") {
                    refused.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    let mut fresh = Latencies::default();
    let mut victim_refused = 0;
    for _ in 0..SAMPLES {
        let t0 = Instant::now();
        let mut tcp = TcpStream::connect(addr).await.expect("connect");
        tcp.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .expect("write");
        let mut out = Vec::new();
        let _ = tcp.read_to_end(&mut out).await;
        fresh.push(t0.elapsed());
        if !out.starts_with(b"HTTP/1.1 200") {
            victim_refused += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    for l in loops {
        l.await.expect("reconnect loop");
    }
    let (_, fresh_p99, _) = fresh.summary();
    notes.push((
        format!("{RECONNECT_LOOPS} loops reconnecting from 127.0.0.2 (cap 256, 64 per address)"),
        format!(
            "victim's {SAMPLES} new connections: {victim_refused} refused, p99 {}; attacker refused {} times",
            ms(fresh_p99),
            refused_attacker.load(Ordering::Relaxed)
        ),
    ));

    // 5. Import of the large team's file as another team (its tokens go with it: the original
    //    is deleted first), then 6. its deletion.
    let file = export_bytes(admin).await;
    let deleted = admin.http_delete("/v1/teams/large").await;
    assert_eq!(deleted, 204);
    let importer = admin.clone();
    let (w, r, took) = during_operation(&victim_team, async move {
        let (status, body) = importer.post_bytes("/v1/teams/copy/import", file).await;
        assert_eq!(status, 201, "import: {body}");
    })
    .await;
    notes.push((
        format!("victim write / read p99 while a {stored}-message team is imported"),
        format!(
            "{} ({}) / {} ({}); the import took {}",
            ms(w),
            ratio(w, qw),
            ms(r),
            ratio(r, qr),
            ms(took)
        ),
    ));
    let deleter = admin.clone();
    let (w, r, took) = during_operation(&victim_team, async move {
        assert_eq!(deleter.http_delete("/v1/teams/copy").await, 204);
    })
    .await;
    notes.push((
        format!("victim write / read p99 while a {stored}-message team is deleted"),
        format!(
            "{} ({}) / {} ({}); the deletion took {}",
            ms(w),
            ratio(w, qw),
            ms(r),
            ratio(r, qr),
            ms(took)
        ),
    ));

    let mut all = small_searches;
    let mut figures = Figures::new(
        "attacks",
        "searches",
        all.0.len(),
        started.elapsed(),
        &mut all,
    );
    for (k, v) in notes {
        figures = figures.note(&k, v);
    }
    figures
}

/// The large team's export over a raw connection, read 1 KiB at a time about every second
/// until `stop`.
async fn slow_export(admin: &BenchClient, stop: Arc<AtomicBool>) {
    let addr = admin.base.trim_start_matches("http://").to_string();
    let (_, auth) = admin.raw();
    let mut tcp = TcpStream::connect(&addr).await.expect("connect");
    let head =
        format!("GET /v1/teams/large/export HTTP/1.1\r\nHost: x\r\nAuthorization: {auth}\r\n\r\n");
    tcp.write_all(head.as_bytes()).await.expect("write");
    let mut buf = [0u8; 1024];
    while !stop.load(Ordering::Relaxed) {
        if tcp.read(&mut buf).await.unwrap_or(0) == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn export_bytes(admin: &BenchClient) -> Vec<u8> {
    let (http, auth) = admin.raw();
    let res = http
        .get(format!("{}/v1/teams/large/export", admin.base))
        .header("authorization", auth)
        .send()
        .await
        .expect("export");
    assert_eq!(res.status().as_u16(), 200);
    res.bytes().await.expect("export body").to_vec()
}
