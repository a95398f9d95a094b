//! `compare --backend postgres`: on ONE PostgreSQL cluster, in one invocation, huddle's claim →
//! complete (batched and one at a time, with 1, 2 and 3 real `huddled` replicas, and one replica
//! running four batches of a team at once) beside the raw
//! `SKIP LOCKED` queue doing the same work with pgbench (batched and one at a time, 16 and 64
//! clients). Prints a table of tasks per second, huddle's ratios to the raw queue and to one
//! replica, and each phase's CPU shares (the database's, huddled's, the machine's).

use super::claim;
use super::client::BenchClient;
use super::daemon::{BenchDaemon, ADMIN};
use super::pg_server::PgServer;
use super::proc_cpu::{cores, CpuMeter, CpuShares};
use super::raw_queue;
use super::stats::Figures;
use super::Args;

/// Client counts of the raw queue.
const RAW_CLIENTS: [usize; 2] = [16, 64];
/// Replica counts of huddle, each with the default `batches_per_team` (1); then one replica that
/// runs four batches of the team at once, side by side in the same run.
const REPLICAS: [(usize, Option<usize>); 4] = [(1, None), (2, None), (3, None), (1, Some(4))];

/// One measured phase and what the table says of it.
struct Phase {
    figures: Figures,
    batch: usize,
    /// `Some(replicas)` for huddle, `None` for the raw queue.
    replicas: Option<usize>,
    /// `[storage] batches_per_team` when not the default.
    batches_per_team: Option<usize>,
    clients: usize,
    cpu: CpuShares,
}

pub async fn run(args: &Args, emit: impl Fn(&Figures)) -> Result<Vec<Figures>, String> {
    let server = PgServer::start("huddle")?;
    raw_queue::create_database(&server)?;
    let batched = if args.sizes.claim_batch > 1 {
        args.sizes.claim_batch
    } else {
        50
    };
    let mut phases = Vec::new();
    // Interleaved per batching so drift in the shared machine's load touches both sides.
    for batch in [batched, 1] {
        for clients in RAW_CLIENTS {
            if !args.json && !args.markdown {
                eprintln!("raw queue: batch {batch}, {clients} clients…");
            }
            let figures = raw_queue::run(&server, args.sizes.tasks, clients, batch)?;
            let cpu = parse_cpu(&figures);
            emit(&figures);
            phases.push(Phase {
                figures,
                batch,
                replicas: None,
                batches_per_team: None,
                clients,
                cpu,
            });
        }
        for (replicas, batches_per_team) in REPLICAS {
            if !args.json && !args.markdown {
                eprintln!("huddle: batch {batch}, {replicas} replica(s)…");
            }
            let phase = huddle_phase(&server, args, batch, replicas, batches_per_team).await?;
            emit(&phase.figures);
            phases.push(phase);
        }
    }
    let table = summary(&phases, args.sizes.workers);
    if !args.json {
        println!("\n{table}");
    }
    Ok(phases.into_iter().map(|p| p.figures).collect())
}

/// `replicas` huddled processes on a fresh database of the cluster, `claim` across them.
async fn huddle_phase(
    server: &PgServer,
    args: &Args,
    batch: usize,
    replicas: usize,
    batches_per_team: Option<usize>,
) -> Result<Phase, String> {
    let per_team = batches_per_team.map_or(String::new(), |n| n.to_string());
    let db = format!("huddle_b{batch}_r{replicas}_t{per_team}");
    server.psql("postgres", &format!("create database {db}"))?;
    let url = server.url_for(&db);
    let mut env = vec![("HUDDLE_DATABASE_URL", url.as_str())];
    if batches_per_team.is_some() {
        env.push(("HUDDLE_STORAGE_BATCHES_PER_TEAM", per_team.as_str()));
    }
    let mut daemons = Vec::new();
    for _ in 0..replicas {
        daemons.push(BenchDaemon::start(args.sync.as_str(), &env)?);
    }
    let urls: Vec<String> = daemons.iter().map(|d| d.url.clone()).collect();
    let admin = BenchClient::new(&urls[0], ADMIN);
    let mut sizes = args.sizes.clone();
    sizes.claim_batch = batch;
    let prepared = claim::prepare(&admin, &sizes, &urls).await;
    let daemon_cpu = || daemons.iter().map(|d| d.cpu_seconds()).sum::<f64>();
    let meter = CpuMeter::start(server.postmaster_pid(), daemon_cpu());
    let mut figures = prepared.drive().await;
    let cpu = meter.finish(daemon_cpu());
    let mode = if batch > 1 { "batched" } else { "unbatched" };
    figures.scenario = format!(
        "huddle, {mode}, {replicas} replica{}{}, {} workers",
        if replicas > 1 { "s" } else { "" },
        batches_per_team.map_or(String::new(), |n| format!(" ({n} batches per team)")),
        sizes.workers
    );
    figures.peak_rss_bytes = daemons.iter().map(|d| d.peak_rss()).max().unwrap_or(0);
    figures = figures.note("cpu", cpu.describe(cores()));
    figures.settings = serde_json::json!({
        "backend": "postgres", "replicas": replicas, "workers": sizes.workers,
        "tasks": sizes.tasks, "claimBatch": batch, "batchesPerTeam": batches_per_team,
    });
    Ok(Phase {
        figures,
        batch,
        replicas: Some(replicas),
        batches_per_team,
        clients: sizes.workers,
        cpu,
    })
}

/// The raw phases measure only the database's share (pgbench is the client); read back from
/// their note so the table shows it too.
fn parse_cpu(figures: &Figures) -> CpuShares {
    let note = figures
        .notes
        .iter()
        .find(|(k, _)| k == "cpu")
        .map(|(_, v)| v.as_str())
        .unwrap_or_default();
    let pct = |key: &str| {
        note.split(", ")
            .find_map(|part| part.strip_prefix(key))
            .and_then(|rest| rest.split('%').next()?.trim().parse::<f64>().ok())
            .map_or(0.0, |p| p / 100.0)
    };
    CpuShares {
        database: pct("postgres "),
        other: pct("huddled "),
        machine: pct("whole machine "),
    }
}

/// The markdown table: every phase, huddle's ratios to the raw queue with the same batching
/// (at 16 and at 64 clients) and to its own one-replica figure.
fn summary(phases: &[Phase], workers: usize) -> String {
    let raw = |batch: usize, clients: usize| {
        phases
            .iter()
            .find(|p| p.replicas.is_none() && p.batch == batch && p.clients == clients)
            .map(|p| p.figures.throughput_per_s)
    };
    let one = |batch: usize| {
        phases
            .iter()
            .find(|p| p.replicas == Some(1) && p.batches_per_team.is_none() && p.batch == batch)
            .map(|p| p.figures.throughput_per_s)
    };
    let ratio =
        |a: f64, b: Option<f64>| b.map_or("—".into(), |b| format!("{:.2}×", a / b.max(1e-9)));
    let mut out = String::from(
        "| phase | tasks/s | ÷ raw, 16 clients | ÷ raw, 64 clients | ÷ 1 replica | postgres CPU | huddled CPU | machine CPU |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for p in phases {
        let tps = p.figures.throughput_per_s;
        let (r16, r64, r1) = match p.replicas {
            None => ("—".to_string(), "—".to_string(), "—".to_string()),
            Some(_) => (
                ratio(tps, raw(p.batch, 16)),
                ratio(tps, raw(p.batch, 64)),
                ratio(tps, one(p.batch)),
            ),
        };
        out.push_str(&format!(
            "| {} | {:.0} | {r16} | {r64} | {r1} | {:.0}% | {} | {:.0}% |\n",
            p.figures.scenario,
            tps,
            p.cpu.database * 100.0,
            p.replicas
                .map_or("—".into(), |_| format!("{:.0}%", p.cpu.other * 100.0)),
            p.cpu.machine * 100.0,
        ));
    }
    out.push_str(&format!(
        "\nCPU shares are of all {} cores over the timed phase; huddle ran {workers} workers.\n",
        cores()
    ));
    out
}
