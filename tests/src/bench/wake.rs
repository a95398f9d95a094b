//! `wake`: idle workers long-poll; a coordinator creates tasks one at a time; the figure is the
//! time from the create's response to a worker holding the task.
//!
//! Beside it, on the same daemon and one request at a time, the parts a wake cannot do
//! without: a `GET /healthz` (the request floor), a claim that finds nothing (an authenticated
//! request answered without the store, as a worker's next look is) and a create that no
//! claimer waits for (one durable commit). A wake is at least that create and that look, so
//! their sum divided by three health checks is the lowest ratio a wake can reach while the
//! requests and the commit cost what they do.
//!
//! And, with no daemon at all, a raw SQLite commit of one row in this process with the same
//! durability: whatever serves it, a wake is at least one durable commit and two requests (the
//! create and the claim), each at least a health check, which bounds the ratio from below on
//! this host (`least_ratio`).

use super::client::{add_agent, setup_team, BenchClient};
use super::daemon::BenchDaemon;
use super::stats::{Figures, Latencies};
use super::thread_cpu::ThreadCpu;
use super::{Sizes, Sync};
use serde_json::json;
use std::future::Future;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

pub async fn run(admin: &BenchClient, sizes: &Sizes, sync: Sync, daemon: &BenchDaemon) -> Figures {
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
                        &json!({"prefixes": ["TEST"], "waitMs": 30000, "leaseMs": 3_600_000}),
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
    let probe = add_agent(admin, "wake", "probe", "tester").await;
    if sizes.memory_bytes > 0 {
        coord
            .patch_memory("wake", &memory_of(sizes.memory_bytes))
            .await;
    }
    // Every worker waits in its long poll before the first create.
    long_polls_reach(admin, workers).await;
    let mut lat = Latencies::default();
    let jobs_before = admin.metric("huddle_writer_batch_size_sum").await;
    let known_empty_before = admin.metric("huddle_claims_known_empty_total").await;
    let cpu = ThreadCpu::start(daemon.pid());
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
    let wake_us = cpu.elapsed_ns() as f64 / 1e3 / sizes.wakes.max(1) as f64;
    for h in handles {
        h.abort();
    }
    let per_task = |n: f64| format!("{:.2}", n / sizes.wakes.max(1) as f64);
    let jobs = admin.metric("huddle_writer_batch_size_sum").await - jobs_before;
    let known_empty = admin.metric("huddle_claims_known_empty_total").await - known_empty_before;
    // The parts, with no claimer left waiting: a create below is a commit and nothing more.
    long_polls_reach(admin, 0).await;
    let parts = Parts::measure(admin, &coord, &probe, daemon, sizes.wakes.max(100)).await;
    let commits = sizes.wakes.max(100);
    let raw_commit_us = tokio::task::spawn_blocking(move || {
        super::baseline_sqlite::lone_commit_cpu_us(sync, commits)
    })
    .await
    .expect("the raw commits' thread")
    .expect("raw SQLite commits");
    let raw_create_us = raw_create_us(daemon, sync, commits).await;
    let health3 = 3.0 * parts.health_us;
    Figures::new("wake", "tasks", sizes.wakes, elapsed, &mut lat)
        .note("latency", "create response → worker holds the task")
        .note("idle workers", workers)
        .note("shared memory document", format!("{} bytes", sizes.memory_bytes))
        .note("write jobs per task", per_task(jobs))
        .note(
            "claims answered without a write per task",
            per_task(known_empty),
        )
        .note("daemon CPU per task", format!("{wake_us:.0} µs"))
        .note(
            "one at a time, daemon CPU per request",
            format!(
                "GET /healthz {:.0} µs; claim finding nothing {:.0} µs; create nobody waits for {:.0} µs",
                parts.health_us, parts.empty_claim_us, parts.create_us
            ),
        )
        .note(
            "wake ÷ three health checks",
            format!("{:.2}×", wake_us / health3),
        )
        .note(
            "(create + claim finding nothing) ÷ three health checks",
            format!(
                "{:.2}× (the least a wake can be)",
                (parts.create_us + parts.empty_claim_us) / health3
            ),
        )
        .note(
            "raw SQLite commit of one row, in process, same durability",
            format!("{raw_commit_us:.0} µs of CPU"),
        )
        .note(
            "(raw commit + two health checks) ÷ three health checks",
            format!(
                "{:.2}× (the least any durable wake can be on this host)",
                least_ratio(raw_commit_us, parts.health_us)
            ),
        )
        .note(
            "raw SQLite commit of a create's rows in huddle's schema, in process",
            raw_create_us.map_or("n/a (not SQLite)".into(), |us| format!("{us:.0} µs of CPU")),
        )
        .note(
            "(raw create + two health checks) ÷ three health checks",
            raw_create_us.map_or("n/a".into(), |us| {
                format!(
                    "{:.2}× (the least a wake can be with huddle's rows on this host)",
                    least_ratio(us, parts.health_us)
                )
            }),
        )
}

/// `baseline_own_create::lone_create_cpu_us` on a copy of the daemon's database, in team `wake`;
/// `None` on PostgreSQL (no SQLite file).
async fn raw_create_us(daemon: &BenchDaemon, sync: Sync, commits: usize) -> Option<f64> {
    let live = daemon.sqlite_file();
    if !live.exists() {
        return None;
    }
    let us = tokio::task::spawn_blocking(move || {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let copy = super::baseline_own_copy::copy_of(&live, dir.path())?;
        super::baseline_own_create::lone_create_cpu_us(sync, &copy, "wake", commits)
    })
    .await
    .expect("the raw creates' thread")
    .expect("raw creates in huddle's schema");
    Some(us)
}

/// The least a wake's ratio to three health checks can be with one durable commit per task and
/// two requests (the create and the claim), each costing at least a health check.
fn least_ratio(raw_commit_us: f64, health_us: f64) -> f64 {
    (raw_commit_us + 2.0 * health_us) / (3.0 * health_us)
}

/// Daemon CPU per request, one at a time, of the requests a wake is made of.
struct Parts {
    health_us: f64,
    empty_claim_us: f64,
    create_us: f64,
}

impl Parts {
    async fn measure(
        admin: &BenchClient,
        coord: &BenchClient,
        probe: &BenchClient,
        daemon: &BenchDaemon,
        n: usize,
    ) -> Parts {
        let (http, _) = admin.raw();
        let health = format!("{}/healthz", admin.base());
        let health_us = cpu_per_request(daemon, n, |_| async {
            let res = http.get(&health).send().await.expect("GET /healthz");
            assert_eq!(res.status().as_u16(), 200, "GET /healthz");
            res.bytes().await.expect("GET /healthz body");
        })
        .await;
        // Every wake task is held, so nothing is ready: after its first look the daemon knows
        // the search is empty and answers without the writer (a worker's next look, unparked).
        let empty_claim_us = cpu_per_request(daemon, n, |_| async {
            let body = json!({"prefixes": ["TEST"], "waitMs": 0});
            let (status, _) = probe
                .post("/v1/teams/wake/tasks/claim", &body)
                .await
                .expect("claim");
            assert_eq!(status, 204, "a claim with nothing ready");
        })
        .await;
        // A prefix nobody claims, so the claim above stays empty if measured again.
        let create_us = cpu_per_request(daemon, n, |i| async move {
            let body = json!({"id": format!("QARUN-{i}"), "subject": "alone"});
            coord.post_ok("/v1/teams/wake/tasks", &body, 201).await;
        })
        .await;
        Parts {
            health_us,
            empty_claim_us,
            create_us,
        }
    }
}

/// `n` requests one after another (after a few unmeasured ones); daemon CPU µs per request.
async fn cpu_per_request<F, Fut>(daemon: &BenchDaemon, n: usize, mut request: F) -> f64
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = ()>,
{
    const WARM_UP: usize = 20;
    for i in 0..WARM_UP {
        request(i).await;
    }
    let cpu = ThreadCpu::start(daemon.pid());
    for i in WARM_UP..WARM_UP + n {
        request(i).await;
    }
    cpu.elapsed_ns() as f64 / 1e3 / n as f64
}

/// A merge patch that leaves the shared memory document about `bytes` long: test results, as a
/// team's document holds them.
fn memory_of(bytes: usize) -> serde_json::Value {
    const ENTRY: usize = 120; // `"t123456": "…100 bytes…",` with its quotes and separators
    let results: serde_json::Map<String, serde_json::Value> = (0..bytes / ENTRY)
        .map(|i| (format!("t{i}"), json!("x".repeat(100))))
        .collect();
    json!({ "results": results })
}

/// Waits (up to a minute) until `n` claims wait in the daemon.
pub(super) async fn long_polls_reach(admin: &BenchClient, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while admin.metric("huddle_long_polls_waiting").await as usize != n {
        assert!(
            Instant::now() < deadline,
            "{n} long polls never waited in the daemon"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
