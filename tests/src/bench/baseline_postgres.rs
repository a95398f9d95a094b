//! The PostgreSQL peer: a `FOR UPDATE SKIP LOCKED` claim-and-complete queue driven by pgbench
//! with as many clients as huddle's workers, against a server the harness starts on a temporary
//! directory and port (and stops afterwards).

use super::pg_server::{as_pg, check, PgServer};
use super::stats::{Figures, Latencies};
use super::Sizes;
use std::process::Command;
use std::time::Duration;

const SCRIPT: &str = "begin;
select id as job from jobs where status = 'pending' order by id limit 1 for update skip locked \\gset
update jobs set status = 'running' where id = :job;
update jobs set status = 'done' where id = :job;
commit;
";

pub async fn run(sizes: &Sizes) -> Result<Figures, String> {
    let server = PgServer::start("bench")?;
    let (bin, dir, port) = (server.bin.clone(), &server.dir, server.port);
    let sock = dir.path().to_string_lossy().to_string();
    let psql = |sql: &str| {
        check(
            as_pg(&bin, "psql").args([
                "-h",
                &sock,
                "-p",
                &port.to_string(),
                "-U",
                "bench",
                "-d",
                "postgres",
                "-q",
                "-c",
                sql,
            ]),
            "psql",
        )
    };
    psql("create table jobs (id bigserial primary key, status text not null, owner text)")?;
    psql(&format!(
        "insert into jobs (status) select 'pending' from generate_series(1, {})",
        sizes.tasks
    ))?;
    psql("create index jobs_ready on jobs (id) where status = 'pending'")?;
    psql("vacuum analyze jobs")?;
    let script = dir.path().join("claim.sql");
    std::fs::write(&script, SCRIPT).map_err(|e| e.to_string())?;
    let _ = Command::new("chown")
        .args(["postgres:postgres"])
        .arg(&script)
        .status();
    let clients = sizes.workers.clamp(1, 150);
    let per_client = (sizes.tasks / clients).max(1);
    let out = check(
        as_pg(&bin, "pgbench")
            .args([
                "-h",
                &sock,
                "-p",
                &port.to_string(),
                "-U",
                "bench",
                "-n",
                "-r",
                "-c",
                &clients.to_string(),
                "-j",
                "2",
            ])
            .args(["-t", &per_client.to_string(), "-f"])
            .arg(&script)
            .arg("postgres"),
        "pgbench",
    )?;
    drop(server);
    let tps =
        parse_after(&out, "tps = ").ok_or_else(|| format!("no tps in pgbench output: {out}"))?;
    let latency_ms = parse_after(&out, "latency average = ").unwrap_or(0.0);
    let mut lat = Latencies(vec![Duration::from_secs_f64(latency_ms / 1000.0)]);
    let secs = (per_client * clients) as f64 / tps.max(1e-9);
    let mut figures = Figures::new(
        "postgres skip locked (pgbench)",
        "tasks",
        per_client * clients,
        Duration::from_secs_f64(secs),
        &mut lat,
    )
    .note("latency", "pgbench average (p50 = p99 = max = average)");
    figures.settings = serde_json::json!({
        "synchronous_commit": "on", "clients": clients, "tasks": per_client * clients
    });
    Ok(figures)
}

fn parse_after(text: &str, key: &str) -> Option<f64> {
    let rest = &text[text.find(key)? + key.len()..];
    rest.split_whitespace().next()?.parse().ok()
}
