//! `compare --backend postgres`: on ONE PostgreSQL cluster, in one invocation, huddle's claim →
//! complete (batched and one at a time, with 1, 2 and 3 real `huddled` replicas, and one replica
//! running four batches of a team at once) beside the raw
//! `SKIP LOCKED` queue doing the same work with pgbench (batched and one at a time, 16 and 64
//! clients). Prints a table of tasks per second, huddle's ratios to the raw queue and to one
//! replica, and each phase's CPU shares (the database's, huddled's, the machine's); then a
//! table of CPU per task, which holds up on a shared machine where tasks per second do not.
//!
//! CPU per task counts, over each timed phase: PostgreSQL's postmaster, its living backends
//! and the backends it reaped (every database of the cluster, background workers included);
//! for huddle, every replica's huddled process (user + system, all threads); for the raw
//! queue, pgbench, the client, read as this process's reaped children's CPU across the one
//! pgbench run (`runuser` waits for pgbench, so pgbench's CPU rolls up into it). huddle's
//! client (this bench's HTTP workers) is not counted, as the raw queue's script is the
//! whole of its client while huddle's workers stand in for agents.

use super::claim;
use super::client::BenchClient;
use super::daemon::{BenchDaemon, ADMIN};
use super::pg_server::PgServer;
use super::proc_cpu::{cores, CpuMeter, CpuPerTask, CpuShares};
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
    /// CPU per task: the database's, huddled's (`other`) or pgbench's (`reaped_children`).
    per_task: CpuPerTask,
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
            let raw = raw_queue::run(&server, args.sizes.tasks, clients, batch)?;
            emit(&raw.figures);
            phases.push(Phase {
                per_task: raw.seconds.per_task_us(raw.tasks),
                figures: raw.figures,
                batch,
                replicas: None,
                batches_per_team: None,
                clients,
                cpu: raw.shares,
            });
        }
        for (replicas, batches_per_team) in REPLICAS {
            if !args.json && !args.markdown {
                eprintln!("huddle: batch {batch}, {replicas} replica(s)…");
            }
            let mut phase = huddle_phase(&server, args, batch, replicas, batches_per_team).await?;
            // The raw rows and one replica's of this batching ran before.
            add_cpu_ratios(&phases, &mut phase);
            emit(&phase.figures);
            phases.push(phase);
        }
    }
    let table = summary(&phases, args.sizes.workers);
    let cpu_table = cpu_summary(&phases);
    if !args.json {
        println!("\n{table}\n{cpu_table}");
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
    server.statements_reset()?;
    let meter = CpuMeter::start(server.postmaster_pid(), daemon_cpu());
    let mut figures = prepared.drive().await;
    let (cpu, seconds) = meter.finish(daemon_cpu());
    let tasks = (figures.throughput_per_s * figures.elapsed_s).round() as usize;
    eprint!("{}", server.statements_report(&db, tasks, "task")?);
    let per_task = seconds.per_task_us(tasks);
    let mode = if batch > 1 { "batched" } else { "unbatched" };
    figures.scenario = format!(
        "huddle, {mode}, {replicas} replica{}{}, {} workers",
        if replicas > 1 { "s" } else { "" },
        batches_per_team.map_or(String::new(), |n| format!(" ({n} batches per team)")),
        sizes.workers
    );
    figures.peak_rss_bytes = daemons.iter().map(|d| d.peak_rss()).max().unwrap_or(0);
    figures = figures.note("cpu", cpu.describe(cores())).note(
        "cpu per task",
        format!(
            "postgres {:.1} µs, huddled {:.1} µs, total {:.1} µs",
            per_task.database,
            per_task.other,
            per_task.total()
        ),
    );
    figures.settings = serde_json::json!({
        "backend": "postgres", "replicas": replicas, "workers": sizes.workers,
        "tasks": sizes.tasks, "claimBatch": batch, "batchesPerTeam": batches_per_team,
        "cpuUsPerTask": {
            "postgres": per_task.database, "huddled": per_task.other, "total": per_task.total(),
        },
    });
    Ok(Phase {
        figures,
        batch,
        replicas: Some(replicas),
        batches_per_team,
        clients: sizes.workers,
        cpu,
        per_task,
    })
}

/// The markdown table: every phase, huddle's ratios to the raw queue with the same batching
/// (at 16 and at 64 clients) and to its own one-replica figure.
fn summary(phases: &[Phase], workers: usize) -> String {
    let raw = |batch: usize, clients: usize| {
        raw_phase(phases, batch, clients).map(|p| p.figures.throughput_per_s)
    };
    let one = |batch: usize| one_replica(phases, batch).map(|p| p.figures.throughput_per_s);
    let ratio =
        |a: f64, b: Option<f64>| b.map_or("—".into(), |b| format!("{:.2}×", a / b.max(1e-9)));
    let mut out = String::from(
        "| phase | tasks/s | ÷ raw, 16 clients | ÷ raw, 64 clients | ÷ 1 replica | postgres CPU share | huddled CPU share | machine CPU share |\n\
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
    if let Some(cpus) = super::pg_server::server_cpus() {
        out.push_str(&format!(
            "The database ran on CPUs {cpus} only (HUDDLE_BENCH_PG_CPUS); the bench, huddled and \
             pgbench where the bench was started.\n"
        ));
    }
    out
}

/// The raw queue's phase with the same batching and `clients`.
fn raw_phase(phases: &[Phase], batch: usize, clients: usize) -> Option<&Phase> {
    phases
        .iter()
        .find(|p| p.replicas.is_none() && p.batch == batch && p.clients == clients)
}

/// huddle's one-replica phase (default batches per team) with the same batching.
fn one_replica(phases: &[Phase], batch: usize) -> Option<&Phase> {
    phases
        .iter()
        .find(|p| p.replicas == Some(1) && p.batches_per_team.is_none() && p.batch == batch)
}

/// For a huddle phase: (total ÷ raw total at 64 clients, at 16 clients, postgres ÷ one
/// replica's postgres), each when there is something to divide by.
fn cpu_ratios(phases: &[Phase], p: &Phase) -> [Option<f64>; 3] {
    if p.replicas.is_none() {
        return [None; 3];
    }
    let div = |a: f64, b: f64| (b > 0.0).then(|| a / b);
    let raw_total = |clients| raw_phase(phases, p.batch, clients).map(|r| r.per_task.total());
    let is_one = p.replicas == Some(1) && p.batches_per_team.is_none();
    let one_db = one_replica(phases, p.batch)
        .filter(|_| !is_one)
        .map(|o| o.per_task.database);
    [
        raw_total(64).and_then(|r| div(p.per_task.total(), r)),
        raw_total(16).and_then(|r| div(p.per_task.total(), r)),
        one_db.and_then(|o| div(p.per_task.database, o)),
    ]
}

/// The second table: CPU per task in microseconds, and huddle's ratios to the raw queue's
/// (database + pgbench) and, for more replicas, the database's to one replica's.
fn cpu_summary(phases: &[Phase]) -> String {
    let us = |v: f64| format!("{v:.1}");
    let ratio = |r: Option<f64>| r.map_or("—".into(), |r| format!("{r:.2}×"));
    let mut out = String::from(
        "CPU per task (µs of CPU time ÷ tasks completed in the timed phase):\n\n\
         | phase | postgres µs/task | huddled µs/task | pgbench µs/task | total µs/task | \
         total ÷ raw total, 64 clients | total ÷ raw total, 16 clients | \
         postgres µs/task ÷ 1 replica's |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for p in phases {
        let (huddled, pgbench) = match p.replicas {
            Some(_) => (us(p.per_task.other), "—".to_string()),
            None => ("—".to_string(), us(p.per_task.reaped_children)),
        };
        let [r64, r16, r1] = cpu_ratios(phases, p);
        out.push_str(&format!(
            "| {} | {} | {huddled} | {pgbench} | {} | {} | {} | {} |\n",
            p.figures.scenario,
            us(p.per_task.database),
            us(p.per_task.total()),
            ratio(r64),
            ratio(r16),
            ratio(r1),
        ));
    }
    out.push_str(
        "\npostgres: the postmaster, its backends living and reaped (every database of the \
         cluster). huddled: every replica's process. pgbench: the raw queue's client, \
         connecting included. Goals: huddle's total ≤ 1.25× the raw queue's, batched and one \
         per request; a second replica adds no postgres CPU per task (≈ 1.00×).\n",
    );
    out
}

/// A huddle phase's CPU ratios (`cpu_ratios` against the phases before it), as a note and in
/// its settings.
fn add_cpu_ratios(before: &[Phase], phase: &mut Phase) {
    let [r64, r16, r1] = cpu_ratios(before, phase);
    let show = |r: Option<f64>| r.map_or("—".into(), |r| format!("{r:.2}×"));
    phase.figures.notes.push((
        "cpu per task ratios".into(),
        format!(
            "total ÷ raw total: {} (64 clients), {} (16 clients); postgres ÷ 1 replica's: {}",
            show(r64),
            show(r16),
            show(r1)
        ),
    ));
    if let Some(settings) = phase.figures.settings.as_object_mut() {
        settings.insert(
            "cpuPerTaskRatios".into(),
            serde_json::json!({
                "totalToRaw64": r64, "totalToRaw16": r16, "postgresToOneReplica": r1,
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::stats::Latencies;
    use std::time::Duration;

    fn phase(replicas: Option<usize>, clients: usize, database: f64, other: f64) -> Phase {
        let figures = Figures::new(
            &format!("{replicas:?} {clients}"),
            "tasks",
            1000,
            Duration::from_secs(1),
            &mut Latencies::default(),
        );
        let (other, reaped_children) = match replicas {
            Some(_) => (other, 0.0),
            None => (0.0, other),
        };
        Phase {
            figures,
            batch: 50,
            replicas,
            batches_per_team: None,
            clients,
            cpu: CpuShares::default(),
            per_task: CpuPerTask {
                database,
                other,
                reaped_children,
            },
        }
    }

    #[test]
    fn ratios_are_to_the_raw_total_and_one_replicas_database() {
        let phases = vec![
            phase(None, 16, 28.0, 2.0),
            phase(None, 64, 58.0, 2.0),
            phase(Some(1), 64, 45.0, 15.0),
            phase(Some(2), 64, 54.0, 21.0),
        ];
        let close = |got: Option<f64>, want: f64| {
            assert!((got.unwrap() - want).abs() < 1e-9, "{got:?} ≠ {want}")
        };
        let [r64, r16, r1] = cpu_ratios(&phases, &phases[2]);
        close(r64, 1.0);
        close(r16, 2.0);
        assert_eq!(r1, None, "one replica is not compared with itself");
        let [r64, r16, r1] = cpu_ratios(&phases, &phases[3]);
        close(r64, 1.25);
        close(r16, 2.5);
        close(r1, 1.2);
        assert_eq!(cpu_ratios(&phases, &phases[0]), [None; 3]);
        // Another batching has no raw row to divide by.
        let mut unbatched = phase(Some(1), 64, 300.0, 150.0);
        unbatched.batch = 1;
        assert_eq!(cpu_ratios(&phases, &unbatched), [None; 3]);

        let table = cpu_summary(&phases);
        assert!(
            table.contains("| Some(2) 64 | 54.0 | 21.0 | — | 75.0 | 1.25× | 2.50× | 1.20× |"),
            "{table}"
        );
        assert!(
            table.contains("| None 64 | 58.0 | — | 2.0 | 60.0 | — | — | — |"),
            "{table}"
        );
    }
}
