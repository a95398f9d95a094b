//! `guard`: the daemon's CPU per operation on the paths agents feel — a wake (a task created and
//! handed to a waiting worker), a claim, a heartbeat, a completion, a post and a read — each divided by the
//! same run's floor (the CPU of a `GET /healthz`), and compared with the committed baseline
//! (`guard_baseline.rs`). CPU, not wall time: the machine is shared, and CPU per operation holds
//! where throughput does not; the ratio to the floor takes out most of what the machine itself
//! adds. It never fails a run: it prints the table and names what grew.

use super::client::{add_agent, create_tasks, setup_team, BenchClient};
use super::daemon::BenchDaemon;
use super::guard_baseline::{Baseline, Measured};
use super::thread_cpu::ThreadCpu;
use super::wake::long_polls_reach;
use super::{Args, Sizes};
use serde_json::json;
use tokio::sync::mpsc;

const TEAM: &str = "guard";

/// The guard's daemon: one team's load, with no per-token rate or per-team caps in the way.
const ENV: &[(&str, &str)] = &[
    ("HUDDLE_LIMITS_REQUESTS_PER_MINUTE", "100000000"),
    ("HUDDLE_LIMITS_MAX_AGENTS_PER_TEAM", "100000"),
];

/// Runs the guard on a fresh daemon, prints its table, and writes the baseline when asked.
pub async fn run(args: &Args) -> Result<Vec<Measured>, String> {
    let daemon = BenchDaemon::start(args.sync.as_str(), ENV)?;
    let admin = BenchClient::new(&daemon.url, super::daemon::ADMIN);
    let sizes = &args.sizes;
    let workers = sizes.workers.clamp(1, 64);
    let coord = setup_team(&admin, TEAM).await;
    let mut crew = Vec::with_capacity(workers);
    for w in 0..workers {
        crew.push(add_agent(&admin, TEAM, &format!("w{w}"), "tester").await);
    }
    let per_worker = (sizes.tasks / workers).max(1);

    let floor_before = floor(&admin, &daemon, sizes).await;
    let wake = wake(&admin, &coord, &crew, &daemon, sizes.wakes.max(1)).await;
    let (claim, held) = claim(&coord, &crew, &daemon, per_worker).await;
    let heartbeat_body = json!({"leaseMs": 3_600_000});
    let heartbeat = act_on_held(&crew, &held, &daemon, "heartbeat", heartbeat_body).await;
    let complete = act_on_held(&crew, &held, &daemon, "complete", json!({})).await;
    let post = each_worker(&crew, &daemon, per_worker, |api, w, i| async move {
        let body = json!({"to": "coordinator", "type": "impl_progress", "summary": format!("w{w} step {i}")});
        api.post_ok(&format!("/v1/teams/{TEAM}/messages"), &body, 201)
            .await;
    })
    .await;
    let read = each_worker(&crew, &daemon, per_worker, |api, _, _| async move {
        let (http, auth) = api.raw();
        let url = format!(
            "{}/v1/teams/{TEAM}/tasks?status=completed&limit=20",
            api.base
        );
        let res = http.get(url).header("authorization", auth).send().await;
        let res = res.expect("GET …/tasks");
        assert_eq!(res.status().as_u16(), 200, "GET …/tasks");
        res.bytes().await.expect("GET …/tasks body");
    })
    .await;
    let floor_after = floor(&admin, &daemon, sizes).await;
    let floor = Floor {
        sequential_ns: (floor_before.sequential_ns + floor_after.sequential_ns) / 2.0,
        concurrent_ns: (floor_before.concurrent_ns + floor_after.concurrent_ns) / 2.0,
    };

    let measured = vec![
        Measured::new("wake", 3, wake, 3.0 * floor.sequential_ns),
        Measured::new("claim", 1, claim, floor.concurrent_ns),
        Measured::new("heartbeat", 1, heartbeat, floor.concurrent_ns),
        Measured::new("complete", 1, complete, floor.concurrent_ns),
        Measured::new("post", 1, post, floor.concurrent_ns),
        Measured::new("read", 1, read, floor.concurrent_ns),
    ];
    let path = args.baseline.clone().unwrap_or_else(Baseline::default_path);
    let mut baseline = Baseline::load(&path)?;
    println!(
        "guard ({} build; workers {workers}; {} per operation, {} wakes; floor: GET /healthz {:.1} µs one at a time, {:.1} µs from {workers} clients, before {:.1} / {:.1}, after {:.1} / {:.1})",
        Baseline::profile(),
        per_worker * workers,
        sizes.wakes.max(1),
        floor.sequential_ns / 1e3,
        floor.concurrent_ns / 1e3,
        floor_before.sequential_ns / 1e3,
        floor_before.concurrent_ns / 1e3,
        floor_after.sequential_ns / 1e3,
        floor_after.concurrent_ns / 1e3,
    );
    print!("{}", baseline.table(&measured));
    println!("{}", baseline.verdict(&measured));
    if args.write_baseline {
        baseline.record(&measured, &args_line(args));
        baseline.save(&path)?;
        println!(
            "guard: baseline for the {} build written to {}",
            Baseline::profile(),
            path.display()
        );
    }
    Ok(measured)
}

/// The command line that made a baseline, for whoever refreshes it next.
fn args_line(args: &Args) -> String {
    format!(
        "huddle-bench guard --tasks {} --workers {} --wakes {} --sync {}",
        args.sizes.tasks,
        args.sizes.workers,
        args.sizes.wakes,
        args.sync.as_str()
    )
}

/// CPU nanoseconds of one `GET /healthz`, one at a time and from every worker at once.
struct Floor {
    sequential_ns: f64,
    concurrent_ns: f64,
}

async fn floor(admin: &BenchClient, daemon: &BenchDaemon, sizes: &Sizes) -> Floor {
    let (http, _) = admin.raw();
    let url = format!("{}/healthz", admin.base());
    let n = (sizes.tasks / 2).max(100);
    let cpu = ThreadCpu::start(daemon.pid());
    for _ in 0..n {
        health_check(http, &url).await;
    }
    let sequential_ns = cpu.elapsed_ns() as f64 / n as f64;
    let clients = sizes.workers.clamp(1, 64);
    let each = (n / clients).max(1);
    let cpu = ThreadCpu::start(daemon.pid());
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
        h.await.expect("a health-check client");
    }
    let concurrent_ns = cpu.elapsed_ns() as f64 / (clients * each) as f64;
    Floor {
        sequential_ns,
        concurrent_ns,
    }
}

async fn health_check(http: &reqwest::Client, url: &str) {
    let res = http.get(url).send().await.expect("GET /healthz");
    assert_eq!(res.status().as_u16(), 200, "GET /healthz");
    res.bytes().await.expect("GET /healthz body");
}

/// Every worker long-polls; the coordinator creates `wakes` tasks one at a time, each taken
/// before the next is created. CPU per task: the create, the woken claim, the worker's next look.
async fn wake(
    admin: &BenchClient,
    coord: &BenchClient,
    crew: &[BenchClient],
    daemon: &BenchDaemon,
    wakes: usize,
) -> f64 {
    let (got_tx, mut got_rx) = mpsc::unbounded_channel::<String>();
    let handles: Vec<_> = crew
        .iter()
        .map(|api| {
            let (api, got) = (api.clone(), got_tx.clone());
            tokio::spawn(async move {
                let body = json!({"prefixes": ["WAKE"], "waitMs": 30000, "leaseMs": 3_600_000});
                loop {
                    let path = format!("/v1/teams/{TEAM}/tasks/claim");
                    let (status, task) = api.post(&path, &body).await.expect("claim");
                    if status == 200 {
                        let _ = got.send(task["id"].as_str().expect("id").to_string());
                    }
                }
            })
        })
        .collect();
    long_polls_reach(admin, crew.len()).await;
    let cpu = ThreadCpu::start(daemon.pid());
    for i in 0..wakes {
        let id = format!("WAKE-{i}");
        let body = json!({"id": id, "subject": "wake"});
        coord
            .post_ok(&format!("/v1/teams/{TEAM}/tasks"), &body, 201)
            .await;
        let got = got_rx.recv().await.expect("a worker took it");
        assert_eq!(got, id, "the task just created is the one taken");
    }
    // A worker's next look runs beside the following create, so each wake's is counted but the
    // last one's (not waited for: the scrapes that could tell would count too).
    let ns = cpu.elapsed_ns() as f64 / wakes as f64;
    for h in handles {
        h.abort();
    }
    long_polls_reach(admin, 0).await;
    ns
}

/// `per_worker` tasks per worker made ready (not measured), then every worker claims one per
/// request until none is left. CPU per claimed task; the ids each worker holds.
async fn claim(
    coord: &BenchClient,
    crew: &[BenchClient],
    daemon: &BenchDaemon,
    per_worker: usize,
) -> (f64, Vec<Vec<String>>) {
    let tasks = (0..per_worker * crew.len())
        .map(|i| json!({"id": format!("TEST-{i}"), "subject": "guard"}))
        .collect();
    create_tasks(coord, TEAM, tasks).await;
    let cpu = ThreadCpu::start(daemon.pid());
    let handles: Vec<_> = crew
        .iter()
        .map(|api| {
            let api = api.clone();
            tokio::spawn(async move {
                let mut held = Vec::new();
                let body = json!({"leaseMs": 3_600_000});
                loop {
                    let path = format!("/v1/teams/{TEAM}/tasks/claim");
                    match api.post(&path, &body).await.expect("claim") {
                        (200, task) => held.push(task["id"].as_str().expect("id").to_string()),
                        (204, _) => return held,
                        (status, body) => panic!("claim answered {status}: {body}"),
                    }
                }
            })
        })
        .collect();
    let mut held = Vec::new();
    for h in handles {
        held.push(h.await.expect("a claiming worker"));
    }
    let claimed: usize = held.iter().map(Vec::len).sum();
    assert_eq!(claimed, per_worker * crew.len(), "every task claimed once");
    (cpu.elapsed_ns() as f64 / claimed as f64, held)
}

/// Every worker posts `action` (`heartbeat`, `complete`) with `body` for each task it holds,
/// one request per task. CPU per request.
async fn act_on_held(
    crew: &[BenchClient],
    held: &[Vec<String>],
    daemon: &BenchDaemon,
    action: &'static str,
    body: serde_json::Value,
) -> f64 {
    let total: usize = held.iter().map(Vec::len).sum();
    let cpu = ThreadCpu::start(daemon.pid());
    let handles: Vec<_> = crew
        .iter()
        .zip(held.iter().cloned())
        .map(|(api, ids)| {
            let (api, body) = (api.clone(), body.clone());
            tokio::spawn(async move {
                for id in ids {
                    let path = format!("/v1/teams/{TEAM}/tasks/{id}/{action}");
                    api.post_ok(&path, &body, 200).await;
                }
            })
        })
        .collect();
    for h in handles {
        h.await.expect("a completing worker");
    }
    cpu.elapsed_ns() as f64 / total.max(1) as f64
}

/// Every worker runs `op` `per_worker` times, one request each. CPU per request.
async fn each_worker<F, Fut>(
    crew: &[BenchClient],
    daemon: &BenchDaemon,
    per_worker: usize,
    op: F,
) -> f64
where
    F: Fn(BenchClient, usize, usize) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let cpu = ThreadCpu::start(daemon.pid());
    let handles: Vec<_> = crew
        .iter()
        .enumerate()
        .map(|(w, api)| {
            let (api, op) = (api.clone(), op.clone());
            tokio::spawn(async move {
                for i in 0..per_worker {
                    op(api.clone(), w, i).await;
                }
            })
        })
        .collect();
    for h in handles {
        h.await.expect("a worker");
    }
    cpu.elapsed_ns() as f64 / (per_worker * crew.len()) as f64
}
