//! The PostgreSQL peer: a `FOR UPDATE SKIP LOCKED` claim-and-complete queue driven by pgbench
//! with as many clients as huddle's workers, against a server the harness starts on a temporary
//! directory and port (and stops afterwards).

use super::stats::{Figures, Latencies};
use super::Sizes;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const SCRIPT: &str = "begin;
select id as job from jobs where status = 'pending' order by id limit 1 for update skip locked \\gset
update jobs set status = 'running' where id = :job;
update jobs set status = 'done' where id = :job;
commit;
";

/// Finds the newest installed server's `bin/` directory.
fn pg_bin() -> Result<PathBuf, String> {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|_| missing())?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|p| p.join("postgres").exists() && p.join("pgbench").exists())
        .collect();
    versions.sort();
    versions.pop().ok_or_else(missing)
}

fn missing() -> String {
    "PostgreSQL server and pgbench are not installed: run scripts/install-bench-deps (apt-get install postgresql postgresql-contrib)".into()
}

/// Runs `program` as the `postgres` user when we are root (initdb refuses root).
fn as_pg(bin: &Path, program: &str) -> Command {
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.starts_with(b"0"))
        .unwrap_or(false);
    if is_root {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(bin.join(program));
        c
    } else {
        Command::new(bin.join(program))
    }
}

fn check(cmd: &mut Command, what: &str) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("{what}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

struct Server {
    bin: PathBuf,
    data: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = as_pg(&self.bin, "pg_ctl")
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "stop"])
            .output();
    }
}

pub async fn run(sizes: &Sizes) -> Result<Figures, String> {
    let bin = pg_bin()?;
    let dir = tempfile::Builder::new()
        .prefix("huddle-pg-")
        .tempdir_in("/tmp")
        .map_err(|e| e.to_string())?;
    let _ = Command::new("chown")
        .args(["-R", "postgres:postgres"])
        .arg(dir.path())
        .status();
    let data = dir.path().join("data");
    check(
        as_pg(&bin, "initdb")
            .args(["-A", "trust", "-U", "bench", "-D"])
            .arg(&data),
        "initdb",
    )?;
    let port = free_port()?;
    let sock = dir.path().to_string_lossy().to_string();
    let opts = format!("-p {port} -k {sock} -c listen_addresses='' -c max_connections=200 -c synchronous_commit=on");
    check(
        as_pg(&bin, "pg_ctl")
            .arg("-D")
            .arg(&data)
            .args(["-o", &opts, "-w", "-l"])
            .arg(dir.path().join("log"))
            .arg("start"),
        "pg_ctl start",
    )?;
    let server = Server {
        bin: bin.clone(),
        data,
    };
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

fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(l.local_addr().map_err(|e| e.to_string())?.port())
}
