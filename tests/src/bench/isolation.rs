//! `isolation`: one team's heavy load against another team's latency, in the same run — the
//! victim's write and read p99 while quiet, then while the noisy team floods, as ratios — and
//! the JSON Patch that doubles the document, with the daemon's peak memory around it.
//!
//! - write flood: 16 clients of the noisy team each creating batches of 1,000 tasks (the
//!   default `[limits] max_batch`; `--max-batch` sets both);
//! - read flood: 16 observers of the noisy team each listing 1,000 tasks at a time;
//! - stream fan-out: the noisy team's observers hold every stream the caps allow and read
//!   what its posters send, while the victim claims and writes (`isolation_streams.rs`);
//! - patch bomb: 16 `copy` operations from the root of a 100 KB document (refused with 413).

use super::client::{add_agent, create_tasks_by, setup_team, BenchClient};
use super::daemon::BenchDaemon;
use super::isolation_streams::{fan_out, victim_claims};
use super::stats::{Figures, Latencies};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const SAMPLES: usize = 300;
const ATTACKERS: usize = 16;
/// Observers asking for streams: with the default caps (32 per token, 256 per team) the last
/// two are refused every stream.
const FAN_OBSERVERS: usize = 10;
const STREAMS_PER_OBSERVER: usize = 32;
const FAN_POSTERS: usize = 4;

/// The victim's write (a message) and read (a page of tasks), timed one after another:
/// `samples` of each, or with `until`, as many as fit before it is set (one at least).
pub async fn victim(
    client: &BenchClient,
    samples: usize,
    until: Option<Arc<AtomicBool>>,
) -> (Latencies, Latencies) {
    let (mut writes, mut reads) = (Latencies::default(), Latencies::default());
    let body = json!({"to": "*", "type": "status", "summary": "steady"});
    let (http, auth) = client.raw();
    loop {
        let t0 = Instant::now();
        client
            .post_ok("/v1/teams/victim/messages", &body, 201)
            .await;
        writes.push(t0.elapsed());
        let t0 = Instant::now();
        let res = http
            .get(format!("{}/v1/teams/victim/tasks?limit=50", client.base))
            .header("authorization", auth)
            .send()
            .await
            .expect("victim read");
        assert_eq!(res.status().as_u16(), 200);
        let _ = res.bytes().await;
        reads.push(t0.elapsed());
        let done = match &until {
            Some(flag) => flag.load(Ordering::Relaxed),
            None => writes.0.len() >= samples,
        };
        if done {
            return (writes, reads);
        }
    }
}

/// Runs `take` with a copy of `client` on a runtime and thread of its own. Another team's
/// client is another process: on the bench's runtime, the victim's requests would also wait
/// behind the attackers' futures, the bench's own scheduling rather than the daemon's.
pub async fn apart<T, F, Fut>(client: &BenchClient, take: F) -> T
where
    T: Send + 'static,
    F: FnOnce(BenchClient) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = T>,
{
    let client = client.detached();
    let (done, answer) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("the victim's runtime");
        let _ = done.send(runtime.block_on(take(client)));
    });
    answer.await.expect("the victim's thread")
}

/// The victim's samples ([`victim`]), on a runtime of its own ([`apart`]).
async fn victim_apart(client: &BenchClient) -> (Latencies, Latencies) {
    apart(client, |c| async move { victim(&c, SAMPLES, None).await }).await
}

/// Runs `attack` on `ATTACKERS` clients until the victim has its samples.
async fn during<F, Fut>(victim_client: &BenchClient, attack: F) -> (Latencies, Latencies, usize)
where
    F: Fn(usize, Arc<AtomicBool>) -> Fut,
    Fut: std::future::Future<Output = usize> + Send + 'static,
{
    let stop = Arc::new(AtomicBool::new(false));
    let attackers: Vec<_> = (0..ATTACKERS)
        .map(|i| tokio::spawn(attack(i, stop.clone())))
        .collect();
    // Let the flood build up before the victim starts.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (writes, reads) = victim_apart(victim_client).await;
    stop.store(true, Ordering::Relaxed);
    let mut done = 0;
    for a in attackers {
        done += a.await.expect("attacker");
    }
    (writes, reads, done)
}

/// The SQLite writer's counters from `/metrics` (sums in seconds, counts).
#[derive(Default)]
struct WriterFigures {
    heavy_job_s: f64,
    heavy_jobs: f64,
    light_wait_s: f64,
    light_jobs: f64,
    commit_s: f64,
    commits: f64,
}

impl WriterFigures {
    async fn read(admin: &BenchClient) -> WriterFigures {
        let m = |name: &'static str| admin.metric(name);
        WriterFigures {
            heavy_job_s: m(r#"huddle_writer_job_seconds_sum{kind="heavy"}"#).await,
            heavy_jobs: m(r#"huddle_writer_job_seconds_count{kind="heavy"}"#).await,
            light_wait_s: m(r#"huddle_writer_wait_seconds_sum{kind="light"}"#).await,
            light_jobs: m(r#"huddle_writer_wait_seconds_count{kind="light"}"#).await,
            commit_s: m("huddle_writer_commit_seconds_sum").await,
            commits: m("huddle_writer_commit_seconds_count").await,
        }
    }

    fn since(&self, before: &WriterFigures) -> WriterFigures {
        WriterFigures {
            heavy_job_s: self.heavy_job_s - before.heavy_job_s,
            heavy_jobs: self.heavy_jobs - before.heavy_jobs,
            light_wait_s: self.light_wait_s - before.light_wait_s,
            light_jobs: self.light_jobs - before.light_jobs,
            commit_s: self.commit_s - before.commit_s,
            commits: self.commits - before.commits,
        }
    }

    fn heavy_job_mean(&self) -> f64 {
        1000.0 * self.heavy_job_s / self.heavy_jobs.max(1.0)
    }

    fn light_wait_mean(&self) -> f64 {
        1000.0 * self.light_wait_s / self.light_jobs.max(1.0)
    }

    fn commit_mean(&self) -> f64 {
        1000.0 * self.commit_s / self.commits.max(1.0)
    }
}

fn p99(lat: &mut Latencies) -> f64 {
    lat.summary().1
}

/// `noisy_batch`: tasks per noisy batch, the largest `[limits] max_batch` allows.
pub async fn run(admin: &BenchClient, noisy_batch: usize, daemon: &BenchDaemon) -> Figures {
    let quiet_team = setup_team(admin, "victim").await;
    quiet_team
        .post_ok(
            "/v1/teams/victim/tasks",
            &json!((0..50)
                .map(|i| json!({"prefix": "V", "subject": format!("v{i}")}))
                .collect::<Vec<_>>()),
            201,
        )
        .await;
    // A task to claim for every claim sample, quiet and during the fan-out.
    let claimable = (0..SAMPLES * 2)
        .map(|i| json!({"prefix": "VC", "subject": format!("c{i}")}))
        .collect();
    create_tasks_by(&quiet_team, "victim", claimable, noisy_batch.min(1000)).await;
    let victim_worker = add_agent(admin, "victim", "worker", "tester").await;
    let noisy = setup_team(admin, "noisy").await;
    let observer = add_agent(admin, "noisy", "watcher", "observer").await;
    let started = Instant::now();

    let (mut quiet_w, mut quiet_r) = victim_apart(&quiet_team).await;
    let (qw, qr) = (p99(&mut quiet_w), p99(&mut quiet_r));
    let (mut quiet_c, mut quiet_cw) = apart(&victim_worker, |w| async move {
        victim_claims(&w, SAMPLES).await
    })
    .await;
    let (qc, qcw) = (p99(&mut quiet_c), p99(&mut quiet_cw));

    let writer_before = WriterFigures::read(admin).await;
    // Encoded once, answers read unparsed: the noisy clients share this process's runtime with
    // the victim's, so their own JSON work would count against the victim's latency.
    let batch: Vec<u8> = serde_json::to_vec(&json!((0..noisy_batch)
        .map(|i| json!({"prefix": "N", "subject": format!("n{i}")}))
        .collect::<Vec<_>>()))
    .expect("encode the batch");
    let (mut flood_w, mut flood_r, batches) = during(&quiet_team, |_, stop| {
        let (noisy, batch) = (noisy.clone(), batch.clone());
        async move {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                noisy
                    .post_encoded("/v1/teams/noisy/tasks", batch.clone(), 201)
                    .await;
                n += 1;
            }
            n
        }
    })
    .await;
    let (fw, fr) = (p99(&mut flood_w), p99(&mut flood_r));
    let writer = WriterFigures::read(admin).await.since(&writer_before);

    // Lists answered otherwise than 200 (503 `team_reads_busy` past a share's wait) are not
    // pages read.
    let lists_refused = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (mut reads_w, mut reads_r, pages) = during(&quiet_team, |_, stop| {
        let (observer, refused) = (observer.clone(), lists_refused.clone());
        async move {
            let (http, auth) = observer.raw();
            let url = format!("{}/v1/teams/noisy/tasks?limit=1000", observer.base);
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let res = http
                    .get(&url)
                    .header("authorization", auth)
                    .send()
                    .await
                    .expect("noisy read");
                let ok = res.status().as_u16() == 200;
                let _ = res.bytes().await;
                if ok {
                    n += 1;
                } else {
                    refused.fetch_add(1, Ordering::Relaxed);
                }
            }
            n
        }
    })
    .await;
    let (rw, rr) = (p99(&mut reads_w), p99(&mut reads_r));

    let mut fan = fan_out(
        admin,
        &victim_worker,
        SAMPLES,
        FAN_OBSERVERS,
        STREAMS_PER_OBSERVER,
        FAN_POSTERS,
    )
    .await;
    let (fc, fcw) = (p99(&mut fan.claims), p99(&mut fan.writes));

    // The patch bomb on a 100 KB document.
    let doc = json!({"notes": (0..1000).map(|i| format!("{i:0>96}")).collect::<Vec<_>>()});
    let (http, auth) = noisy.raw();
    let put = http
        .put(format!("{}/v1/teams/noisy/memory", noisy.base))
        .header("authorization", auth)
        .header("content-type", "application/json")
        .body(json!({"doc": doc}).to_string())
        .send()
        .await
        .expect("put memory");
    assert_eq!(put.status().as_u16(), 200);
    let bomb: Vec<Value> = (0..16)
        .map(|i| json!({"op": "copy", "from": "", "path": format!("/k{i}")}))
        .collect();
    let peak_before = daemon.peak_rss();
    let t0 = Instant::now();
    let refused = http
        .patch(format!("{}/v1/teams/noisy/memory", noisy.base))
        .header("authorization", auth)
        .header("content-type", "application/json-patch+json")
        .body(Value::Array(bomb).to_string())
        .send()
        .await
        .expect("patch bomb");
    let bomb_took = t0.elapsed();
    assert_eq!(
        refused.status().as_u16(),
        413,
        "the doubling patch is refused"
    );
    let peak_growth = daemon.peak_rss().saturating_sub(peak_before);

    let elapsed = started.elapsed();
    let mut all = Latencies::default();
    for l in [
        quiet_w, quiet_r, flood_w, flood_r, reads_w, reads_r, quiet_c, quiet_cw, fan.claims,
        fan.writes,
    ] {
        all.extend(l);
    }
    let ms = |v: f64| format!("{v:.1} ms");
    let ratio = |attack: f64, quiet: f64| format!("{:.1}×", attack / quiet.max(1e-3));
    Figures::new(
        "isolation",
        "victim requests",
        SAMPLES * 10,
        elapsed,
        &mut all,
    )
    .note("victim write p99 quiet", ms(qw))
    .note("victim read p99 quiet", ms(qr))
    .note(
        &format!("victim write p99 while {ATTACKERS} clients create {noisy_batch}-task batches"),
        format!("{} ({})", ms(fw), ratio(fw, qw)),
    )
    .note(
        "  victim read p99 meanwhile",
        format!("{} ({})", ms(fr), ratio(fr, qr)),
    )
    .note("  noisy batches created", batches)
    .note(
        "  writer meanwhile: heavy job / light wait / commit, mean",
        format!(
            "{} / {} / {} ({} heavy jobs, {} light, {} commits)",
            ms(writer.heavy_job_mean()),
            ms(writer.light_wait_mean()),
            ms(writer.commit_mean()),
            writer.heavy_jobs,
            writer.light_jobs,
            writer.commits
        ),
    )
    .note(
        &format!("victim read p99 while {ATTACKERS} observers list 1,000 tasks"),
        format!("{} ({})", ms(rr), ratio(rr, qr)),
    )
    .note(
        "  victim write p99 meanwhile",
        format!("{} ({})", ms(rw), ratio(rw, qw)),
    )
    .note("  noisy lists answered (1,000 tasks each)", pages)
    .note(
        "  noisy lists refused",
        lists_refused.load(Ordering::Relaxed),
    )
    .note("victim claim p99 quiet", ms(qc))
    .note("  victim write p99 beside the claims, quiet", ms(qcw))
    .note(
        &format!(
            "victim claim p99 while {} noisy streams read {FAN_POSTERS} posters",
            fan.streams_open
        ),
        format!("{} ({})", ms(fc), ratio(fc, qc)),
    )
    .note(
        "  victim write p99 meanwhile",
        format!("{} ({})", ms(fcw), ratio(fcw, qcw)),
    )
    .note(
        "  noisy streams open / asked for",
        format!("{} / {}", fan.streams_open, fan.streams_asked),
    )
    .note(
        "  noisy messages posted / frames delivered",
        format!("{} / {}", fan.posted, fan.delivered),
    )
    .note(
        "doubling JSON Patch on a 100 KB document: refused (413) in",
        format!("{:.1} ms", bomb_took.as_secs_f64() * 1000.0),
    )
    .note(
        "  daemon peak RSS growth",
        format!("{:.1} MiB", peak_growth as f64 / (1024.0 * 1024.0)),
    )
}
