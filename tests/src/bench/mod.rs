//! `huddle-bench`: starts a real release `huddled` per scenario on a fresh data directory, drives
//! it over HTTP, and prints throughput, latency percentiles, peak RSS and the settings used.
//! `compare` runs the baselines in the same invocation and prints huddle's figure as a ratio of
//! each: raw SQLite in process for the SQLite backend; with `--backend postgres`, pgbench's raw
//! queue on the very cluster huddle's replicas use (`compare_postgres`).

pub mod attacks;
pub mod baseline_own_copy;
pub mod baseline_own_create;
pub mod baseline_own_rows;
pub mod baseline_sqlite;
pub mod bus;
pub mod claim;
pub mod client;
pub mod compare_postgres;
pub mod compare_sqlite;
pub mod daemon;
pub mod deployment;
pub mod deps;
pub mod deps_worst;
pub mod floor;
pub mod guard;
pub mod guard_baseline;
pub mod isolation;
pub mod isolation_streams;
pub mod memory;
pub mod mixed;
pub mod parallel_repair;
pub mod pg_server;
pub mod proc_cpu;
pub mod raw_queue;
pub mod search;
pub mod slow;
pub mod stats;
pub mod stress;
pub mod thread_cpu;
pub mod wake;

use clap::{Parser, ValueEnum};
use client::BenchClient;
use deployment::Deployment;
use stats::Figures;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scenario {
    Claim,
    Deps,
    Wake,
    Bus,
    Memory,
    /// Post latency with and without SSE subscribers that never read.
    Slow,
    /// The heaviest dependency requests the limits allow, and another team's writes meanwhile.
    DepsWorst,
    /// Random tokens, `?to=` streams and a flood of unfinished connections: the daemon's RSS
    /// and whether a well-behaved client is still served.
    Stress,
    /// A team's whole load at once: workers claiming, subscribers, posts and memory patches;
    /// each stream's p99.
    Mixed,
    /// `GET /healthz` one at a time and from `--workers` clients at once: what a request
    /// costs with no store behind it, the floor under every other figure.
    Floor,
    /// Message search over `--messages` stored messages, in the shapes clients send.
    Search,
    /// One team's write flood, read flood, stream fan-out and a doubling JSON Patch against
    /// another team's write, read and claim p99, as ratios to the same run's quiet phase.
    Isolation,
    /// One team's (or client address's) attacks — search storm, slow export, reconnect storm,
    /// import and deletion of a large team — against another team's p99, and a small team's
    /// search beside a large team's messages.
    Attacks,
    /// Daemon CPU per wake, claim, completion, post and read, each as a ratio to the same
    /// run's `GET /healthz`, beside the committed baseline (`tests/guard-baseline.json`);
    /// names what grew past the tolerance, never fails. `--write-baseline` refreshes it.
    Guard,
    /// `--failures` independent failures in one git repository repaired by 2 and 4 testers,
    /// each task in its own worktree, against 2 testers taking turns on the checkout's lock:
    /// wall time until every task is closed (in-process workers, the stub model).
    ParallelRepair,
    /// Every scenario once.
    All,
    /// `claim` beside the raw SQLite baselines, with ratios: a bare two-row loop, and the
    /// writer's own statements on a copy of a daemon's rows (with the task in each event as
    /// huddle stores it and as an object, with empty events, without events). With
    /// `--backend postgres`: on one cluster, huddle batched and unbatched with 1, 2 and 3
    /// replicas beside pgbench's raw `SKIP LOCKED` queue doing the same work (16 and 64
    /// clients), with ratios and each phase's CPU shares.
    Compare,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Sync {
    Full,
    Normal,
}

impl Sync {
    pub fn as_str(self) -> &'static str {
        match self {
            Sync::Full => "full",
            Sync::Normal => "normal",
        }
    }
}

#[derive(Debug, Clone, Parser)]
#[command(
    name = "huddle-bench",
    about = "Benchmarks a real huddled over HTTP, beside baselines"
)]
pub struct Args {
    #[arg(value_enum)]
    pub scenario: Scenario,
    /// SQLite durability for the daemon and the SQLite baseline.
    #[arg(long, value_enum, default_value = "full")]
    pub sync: Sync,
    #[command(flatten)]
    pub sizes: Sizes,
    /// One JSON object per scenario on stdout.
    #[arg(long)]
    pub json: bool,
    /// A markdown table (for BENCHMARKS.md) on stdout.
    #[arg(long)]
    pub markdown: bool,
    /// Where huddled stores: `sqlite` (a file per daemon) or `postgres` (a server the harness
    /// starts, shared by `--replicas` daemons).
    #[arg(long, value_enum, default_value = "sqlite")]
    pub backend: BenchBackend,
    /// Daemons sharing one PostgreSQL database (`--backend postgres`); `claim` spreads its
    /// workers over them.
    #[arg(long, default_value_t = 1)]
    pub replicas: usize,
    /// The `huddled` to start (default: the one built beside `huddle-bench`), to measure two
    /// builds side by side with the same bench.
    #[arg(long)]
    pub daemon: Option<std::path::PathBuf>,
    /// `isolation` only: `[limits] max_batch` for the daemon (items per request, 50 to
    /// 10,000), and the size of the noisy clients' batches, the largest the limits allow.
    /// Default: the daemon's, 1,000.
    #[arg(long)]
    pub max_batch: Option<usize>,
    /// `parallel-repair` only: the independent failures (1–50).
    #[arg(long, default_value_t = 8)]
    pub failures: usize,
    /// `guard` only: the baseline file to compare with (default `tests/guard-baseline.json`).
    #[arg(long)]
    pub baseline: Option<std::path::PathBuf>,
    /// `guard` only: write this run's ratios as the baseline of this build profile.
    #[arg(long)]
    pub write_baseline: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BenchBackend {
    Sqlite,
    Postgres,
}

#[derive(Debug, Clone, clap::Args)]
pub struct Sizes {
    /// Tasks for `claim` and `deps` (deps uses a tenth).
    #[arg(long, default_value_t = 100_000)]
    pub tasks: usize,
    /// Concurrent workers or posters.
    #[arg(long, default_value_t = 64)]
    pub workers: usize,
    /// SSE subscribers for `bus` and open streams for `memory`.
    #[arg(long, default_value_t = 1_000)]
    pub subscribers: usize,
    /// Messages posted in `bus`.
    #[arg(long, default_value_t = 100_000)]
    pub messages: usize,
    /// Messages stored before the last `memory` reading.
    #[arg(long, default_value_t = 1_000_000)]
    pub stored_messages: usize,
    /// Tasks created one at a time in `wake`.
    #[arg(long, default_value_t = 1_000)]
    pub wakes: usize,
    /// Tasks a worker claims per request (`max`); 1 is one claim per task.
    #[arg(long, default_value_t = 1)]
    pub claim_batch: usize,
    /// The model `claim`'s workers declare (`"model"` in each claim), which makes the daemon
    /// read the team's budget at every claim (the team has none); none by default.
    #[arg(long)]
    pub claim_model: Option<String>,
    /// Messages a poster sends per request in `bus` (`POST …/messages/batch` when over 1); 1
    /// is one `POST …/messages` per message.
    #[arg(long, default_value_t = 1)]
    pub post_batch: usize,
    /// Bytes of the team's shared memory document before `wake` starts (0: empty), to see what
    /// a large document costs the writes around it.
    #[arg(long, default_value_t = 0)]
    pub memory_bytes: usize,
}

/// One team with 1,000 subscribers from one address: past the per-team caps on agents and
/// streams that keep one team from taking a shared daemon, which a benchmark of one team's
/// throughput does not measure.
const ONE_BIG_TEAM: &[(&str, &str)] = &[
    ("HUDDLE_LIMITS_MAX_AGENTS_PER_TEAM", "100000"),
    ("HUDDLE_LIMITS_MAX_STREAMS_PER_TEAM", "100000"),
    ("HUDDLE_LIMITS_MAX_STREAMS_PER_ADDRESS", "100000"),
];

/// One client's requests one at a time as fast as it can: a fast host's claim finding nothing
/// (tens of µs) outruns the default per-token rate (2,000 a second), which is not what these
/// scenarios measure.
const UNTHROTTLED: &[(&str, &str)] = &[("HUDDLE_LIMITS_REQUESTS_PER_MINUTE", "100000000")];

/// Runs one scenario against a fresh daemon.
pub async fn run_scenario(scenario: Scenario, args: &Args) -> Result<Figures, String> {
    let env = match scenario {
        Scenario::Stress => stress::ENV,
        Scenario::Attacks => attacks::ENV,
        Scenario::Mixed => mixed::ENV,
        Scenario::Bus | Scenario::Memory | Scenario::Slow => ONE_BIG_TEAM,
        Scenario::Wake => UNTHROTTLED,
        _ => &[],
    };
    match args.max_batch {
        Some(_) if scenario != Scenario::Isolation => {
            return Err("--max-batch applies to the isolation scenario only".into())
        }
        // Past 10,000 the noisy body would pass the default `max_body_bytes`.
        Some(n) if !(50..=10_000).contains(&n) => {
            return Err("--max-batch must be between 50 and 10000".into())
        }
        _ => {}
    }
    let max_batch = args.max_batch.map(|n| n.to_string());
    let mut env = env.to_vec();
    if let Some(n) = &max_batch {
        env.push(("HUDDLE_LIMITS_MAX_BATCH", n));
    }
    let deployment = Deployment::start(args, &env)?;
    let daemon = &deployment.daemons[0];
    let admin = BenchClient::new(&daemon.url, daemon::ADMIN);
    if let Some(server) = &deployment.server {
        server.statements_reset()?;
    }
    let cpu_before = deployment.cpu_seconds();
    let server_cpu_before = deployment.server_cpu_seconds();
    let replicas: Vec<String> = deployment.daemons.iter().map(|d| d.url.clone()).collect();
    let mut figures = match scenario {
        Scenario::Claim if replicas.len() == 1 => {
            claim::run_measured(&admin, &args.sizes, &daemon.url, daemon.pid()).await
        }
        Scenario::Claim => claim::run(&admin, &args.sizes, &replicas).await,
        Scenario::Deps => deps::run(&admin, &args.sizes).await,
        Scenario::Wake => wake::run(&admin, &args.sizes, args.sync, daemon).await,
        Scenario::Bus => bus::run(&admin, &args.sizes).await,
        Scenario::Memory => memory::run(&admin, &args.sizes, daemon).await,
        Scenario::Mixed => mixed::run(&admin, &args.sizes).await,
        Scenario::Slow => slow::run(&admin, &args.sizes).await,
        Scenario::DepsWorst => deps_worst::run(&admin, &args.sizes).await,
        Scenario::Stress => stress::run(&admin, &args.sizes, daemon).await,
        Scenario::Isolation => {
            isolation::run(&admin, args.max_batch.unwrap_or(1_000), daemon).await
        }
        Scenario::Floor => floor::run(&admin, &args.sizes, daemon).await,
        Scenario::Search => search::run(&admin, &args.sizes).await,
        Scenario::Attacks => attacks::run(&admin, &args.sizes).await,
        Scenario::All | Scenario::Compare | Scenario::Guard | Scenario::ParallelRepair => {
            unreachable!("run by the caller")
        }
    };
    figures.peak_rss_bytes = deployment
        .daemons
        .iter()
        .map(|d| d.peak_rss())
        .max()
        .unwrap_or(0);
    // CPU per operation holds steady when other processes compete for the cores, unlike
    // throughput; it covers setup too, so it is an upper bound.
    let ops = figures.throughput_per_s * figures.elapsed_s;
    let unit = figures.unit.trim_end_matches('s').to_string();
    let per = format!("daemon CPU per {unit}");
    let measured_inside = figures.notes.iter().any(|(k, _)| *k == per);
    if ops > 0.0 && !measured_inside {
        let cpu_us = (deployment.cpu_seconds() - cpu_before) * 1e6 / ops;
        figures = figures.note(&per, format!("{cpu_us:.0} µs"));
    }
    // The database's share beside the daemon's, setup included likewise.
    if let (Some(before), Some(after)) = (server_cpu_before, deployment.server_cpu_seconds()) {
        if ops > 0.0 {
            let cpu_us = (after - before) * 1e6 / ops;
            figures = figures.note(
                &format!("postgres CPU per {unit}"),
                format!("{cpu_us:.0} µs"),
            );
        }
    }
    if let Some(server) = &deployment.server {
        eprint!(
            "{}",
            server.statements_report("postgres", ops as usize, &unit)?
        );
    }
    figures.settings = serde_json::json!({
        "backend": format!("{:?}", args.backend).to_lowercase(),
        "replicas": replicas.len(),
        "synchronous": args.sync.as_str(),
        "tasks": args.sizes.tasks,
        "workers": args.sizes.workers,
        "subscribers": args.sizes.subscribers,
        "claimBatch": args.sizes.claim_batch,
        "claimModel": args.sizes.claim_model,
        "postBatch": args.sizes.post_batch,
    });
    Ok(figures)
}

/// Runs what `args` asks for and prints it; returns all figures.
pub async fn main(args: Args) -> Result<Vec<Figures>, String> {
    if args.scenario == Scenario::Compare && args.backend == BenchBackend::Postgres {
        return compare_postgres::run(&args, |f| emit(&args, f)).await;
    }
    if args.scenario == Scenario::ParallelRepair {
        parallel_repair::run(args.failures).await?;
        return Ok(Vec::new());
    }
    if args.scenario == Scenario::Guard {
        if args.backend != BenchBackend::Sqlite {
            return Err("guard runs on SQLite (its baseline is SQLite's)".into());
        }
        guard::run(&args).await?;
        return Ok(Vec::new());
    }
    let scenarios = match args.scenario {
        Scenario::All => vec![
            Scenario::Floor,
            Scenario::Claim,
            Scenario::Deps,
            Scenario::Wake,
            Scenario::Bus,
            Scenario::Memory,
            Scenario::Mixed,
            Scenario::Slow,
            Scenario::DepsWorst,
            Scenario::Stress,
            Scenario::Search,
            Scenario::Isolation,
        ],
        Scenario::Compare => vec![Scenario::Claim],
        one => vec![one],
    };
    let mut all = Vec::new();
    for scenario in scenarios {
        if !args.json && !args.markdown {
            eprintln!(
                "running {scenario:?} (backend={:?}, replicas={}, sync={})…",
                args.backend,
                args.replicas,
                args.sync.as_str()
            );
        }
        let figures = run_scenario(scenario, &args).await?;
        emit(&args, &figures);
        all.push(figures);
    }
    if args.scenario == Scenario::Compare {
        let huddle = all[0].throughput_per_s;
        for baseline in compare_sqlite::baselines(&args, huddle).await? {
            emit(&args, &baseline);
            all.push(baseline);
        }
    }
    Ok(all)
}

fn emit(args: &Args, f: &Figures) {
    if args.json {
        println!("{}", serde_json::to_string(f).unwrap_or_default());
    } else if args.markdown {
        println!("{}", f.markdown_row());
    } else {
        f.print_text();
    }
}
