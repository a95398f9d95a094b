//! The raw PostgreSQL peer of `claim`: a plain `FOR UPDATE SKIP LOCKED` queue table driven by
//! pgbench on the cluster huddle runs on, doing the same work as a huddle worker — claim (one
//! transaction), then complete (another) — one task at a time or `batch` per transaction.

use super::pg_server::{as_pg, check, PgServer};
use super::proc_cpu::{CpuMeter, CpuSeconds, CpuShares};
use super::stats::{Figures, Latencies};
use std::process::Command;
use std::time::Duration;

/// The database the queue lives in, beside huddle's on the same cluster.
const DB: &str = "rawq";

/// Claim one (with a holder and a lease, as huddle's claim writes), then complete it.
const ONE: &str = "update jobs set status = 'running', claimed_by = :client_id,
       lease_expires_at = now() + interval '30 seconds', version = version + 1
 where id = (select id from jobs where status = 'pending' order by created_at, id limit 1
             for update skip locked)
 returning id as job \\gset
update jobs set status = 'done', lease_expires_at = null, version = version + 1
 where id = :job and status = 'running';
";

/// Claim up to BATCH in one transaction, then complete those in another.
const MANY: &str = "with picked as (
  select id from jobs where status = 'pending' order by created_at, id limit BATCH
  for update skip locked
), claimed as (
  update jobs set status = 'running', claimed_by = :client_id,
         lease_expires_at = now() + interval '30 seconds', version = version + 1
  from picked where jobs.id = picked.id returning jobs.id
)
select coalesce(array_agg(id), '{}') as ids from claimed \\gset
update jobs set status = 'done', lease_expires_at = null, version = version + 1
 where id = any(:ids::bigint[]) and status = 'running';
";

/// A fresh queue of `tasks` pending rows.
fn fill(server: &PgServer, tasks: usize) -> Result<(), String> {
    server.psql(
        DB,
        &format!(
            "drop table if exists jobs;
             create table jobs (id bigserial primary key, status text not null,
                 claimed_by text, lease_expires_at timestamptz, version bigint not null default 1,
                 created_at timestamptz not null default now(), result text);
             insert into jobs (status) select 'pending' from generate_series(1, {tasks});
             create index jobs_ready on jobs (created_at, id) where status = 'pending';"
        ),
    )?;
    // Alone: psql runs several statements of one `-c` in one transaction.
    server.psql(DB, "vacuum analyze jobs")?;
    Ok(())
}

pub fn create_database(server: &PgServer) -> Result<(), String> {
    server.psql("postgres", &format!("create database {DB}"))?;
    Ok(())
}

/// One pgbench run's figures and the CPU behind them.
pub struct RawRun {
    pub figures: Figures,
    pub shares: CpuShares,
    /// The database's (postmaster tree) and pgbench's (`reaped_children`) over the run,
    /// pgbench's connecting included.
    pub seconds: CpuSeconds,
    /// Rows completed.
    pub tasks: usize,
}

/// One pgbench run: `clients` connections, `batch` tasks per claim (1 = one at a time).
/// Tasks per second are the rows completed over pgbench's own time without connecting; CPU
/// is over the whole pgbench run, its connections' backends starting included.
pub fn run(
    server: &PgServer,
    tasks: usize,
    clients: usize,
    batch: usize,
) -> Result<RawRun, String> {
    fill(server, tasks)?;
    let script_text = if batch > 1 {
        MANY.replace("BATCH", &batch.to_string())
    } else {
        ONE.to_string()
    };
    let script = server.dir.path().join(format!("queue-{batch}.sql"));
    std::fs::write(&script, script_text).map_err(|e| e.to_string())?;
    let _ = Command::new("chown")
        .args(["postgres:postgres"])
        .arg(&script)
        .status();
    // Never more claims than tasks: a one-task claim that finds nothing would stop its client.
    let per_client = (tasks / (clients * batch)).max(1);
    // Built before the meter starts: `as_pg` runs `id` as a child of its own.
    let mut pgbench = as_pg(&server.bin, "pgbench");
    pgbench
        .args(["-h", &server.socket_dir(), "-p", &server.port.to_string()])
        .args(["-U", server.user(), "-n", "-M", "prepared"])
        .args(["-c", &clients.to_string(), "-j", "2"])
        .args(["-t", &per_client.to_string(), "-f"])
        .arg(&script)
        .arg(DB);
    // pgbench (under `runuser`, which waits for it) is the only child started and reaped
    // between start and finish, so the reaped children's CPU is the client's.
    server.statements_reset()?;
    let meter = CpuMeter::start(server.postmaster_pid(), 0.0);
    let out = check(&mut pgbench, "pgbench")?;
    let (shares, seconds) = meter.finish(0.0);
    let done: usize = server
        .psql(DB, "select count(*) from jobs where status = 'done'")?
        .trim()
        .parse()
        .map_err(|e| format!("count of done jobs: {e}"))?;
    eprint!("{}", server.statements_report(DB, done, "task")?);
    let tps =
        parse_after(&out, "tps = ").ok_or_else(|| format!("no tps in pgbench output: {out}"))?;
    let scripts = parse_after(&out, "number of transactions actually processed: ")
        .ok_or_else(|| format!("no transaction count in pgbench output: {out}"))?;
    let latency_ms = parse_after(&out, "latency average = ").unwrap_or(0.0);
    let secs = scripts / tps.max(1e-9);
    let mut lat = Latencies(vec![Duration::from_secs_f64(latency_ms / 1000.0)]);
    let mode = if batch > 1 { "batched" } else { "unbatched" };
    let mut figures = Figures::new(
        &format!("raw skip locked, {mode}, {clients} clients"),
        "tasks",
        done,
        Duration::from_secs_f64(secs),
        &mut lat,
    )
    .note("latency", "pgbench average per claim + complete")
    .note("cpu", shares.describe(super::proc_cpu::cores()));
    let per_task = seconds.per_task_us(done);
    figures = figures.note(
        "cpu per task",
        format!(
            "postgres {:.1} µs, pgbench {:.1} µs, total {:.1} µs",
            per_task.database,
            per_task.reaped_children,
            per_task.total()
        ),
    );
    figures.settings = serde_json::json!({
        "synchronous_commit": "on", "clients": clients, "tasks": done, "claimBatch": batch,
        "cpuUsPerTask": {
            "postgres": per_task.database, "pgbench": per_task.reaped_children,
            "total": per_task.total(),
        },
    });
    Ok(RawRun {
        figures,
        shares,
        seconds,
        tasks: done,
    })
}

fn parse_after(text: &str, key: &str) -> Option<f64> {
    let rest = &text[text.find(key)? + key.len()..];
    // "16/16" for the transaction count: the part before the slash.
    rest.split(|c: char| c.is_whitespace() || c == '/')
        .next()?
        .parse()
        .ok()
}
