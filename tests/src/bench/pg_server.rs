//! A PostgreSQL server from Debian's packages on a temporary directory and a free port (Unix
//! socket in that directory, TCP on 127.0.0.1, trust authentication), stopped when dropped:
//! for the pgbench baseline and for huddled's postgres backend in benchmarks.

use std::path::{Path, PathBuf};
use std::process::Command;

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
pub fn as_pg(bin: &Path, program: &str) -> Command {
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

/// `HUDDLE_BENCH_PG_CPUS`, a `taskset` CPU list (`0`, `0-3`): the server runs on those CPUs
/// only, its backends inheriting them. Started as `taskset -c OTHERS huddle-bench …`, the bench,
/// its `huddled` replicas and pgbench run on the other CPUs, and the database has cores of its
/// own, as where it is deployed on a machine of its own.
pub fn server_cpus() -> Option<String> {
    std::env::var("HUDDLE_BENCH_PG_CPUS")
        .ok()
        .filter(|cpus| !cpus.trim().is_empty())
}

/// `cmd` run by `taskset -c` on [`server_cpus`], or as it is when that is not set.
fn on_server_cpus(cmd: Command) -> Command {
    let Some(cpus) = server_cpus() else {
        return cmd;
    };
    let mut pinned = Command::new("taskset");
    pinned.args(["-c", &cpus]).arg(cmd.get_program());
    pinned.args(cmd.get_args());
    pinned
}

pub fn check(cmd: &mut Command, what: &str) -> Result<String, String> {
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

pub struct PgServer {
    pub bin: PathBuf,
    data: PathBuf,
    pub port: u16,
    /// `postgres://USER@127.0.0.1:PORT/postgres`
    pub url: String,
    /// Holds the data directory and the socket; removed after the server stops.
    pub dir: tempfile::TempDir,
}

impl PgServer {
    /// initdb + pg_ctl start with durable commits (`synchronous_commit=on`, fsync on).
    /// `HUDDLE_BENCH_PG_OPTS` adds server options, e.g. to load `pg_stat_statements` when
    /// profiling a scenario.
    pub fn start(user: &str) -> Result<PgServer, String> {
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
                .args(["-A", "trust", "-U", user, "-D"])
                .arg(&data),
            "initdb",
        )?;
        let port = free_port()?;
        let sock = dir.path().to_string_lossy().to_string();
        let opts = format!(
            "-p {port} -k {sock} -c listen_addresses=127.0.0.1 -c max_connections=300 \
             -c synchronous_commit=on -c shared_buffers=256MB {}",
            std::env::var("HUDDLE_BENCH_PG_OPTS").unwrap_or_default()
        );
        check(
            on_server_cpus(as_pg(&bin, "pg_ctl"))
                .arg("-D")
                .arg(&data)
                .args(["-o", &opts, "-w", "-l"])
                .arg(dir.path().join("log"))
                .arg("start"),
            "pg_ctl start",
        )?;
        Ok(PgServer {
            bin,
            data,
            port,
            url: format!("postgres://{user}@127.0.0.1:{port}/postgres"),
            dir,
        })
    }
}

impl PgServer {
    /// Runs `sql` with psql on database `db` over the server's socket; returns psql's output
    /// (unaligned, tuples only).
    pub fn psql(&self, db: &str, sql: &str) -> Result<String, String> {
        let user = self.user();
        check(
            as_pg(&self.bin, "psql")
                .args(["-h", &self.socket_dir(), "-p", &self.port.to_string()])
                .args([
                    "-U",
                    user,
                    "-d",
                    db,
                    "-q",
                    "-A",
                    "-t",
                    "-v",
                    "ON_ERROR_STOP=1",
                ])
                .args(["-c", sql]),
            "psql",
        )
    }

    /// The directory holding the server's Unix socket.
    pub fn socket_dir(&self) -> String {
        self.dir.path().to_string_lossy().to_string()
    }

    /// The superuser `initdb` made.
    pub fn user(&self) -> &str {
        let rest = self.url.trim_start_matches("postgres://");
        rest.split('@').next().unwrap_or("postgres")
    }

    /// The URL of database `db` on this server.
    pub fn url_for(&self, db: &str) -> String {
        match self.url.rsplit_once('/') {
            Some((server, _)) => format!("{server}/{db}"),
            None => self.url.clone(),
        }
    }

    /// Whether `HUDDLE_BENCH_PG_OPTS` loads `pg_stat_statements`
    /// (`-c shared_preload_libraries=pg_stat_statements`): then phases print their statements.
    pub fn statements_enabled() -> bool {
        std::env::var("HUDDLE_BENCH_PG_OPTS").is_ok_and(|o| o.contains("pg_stat_statements"))
    }

    /// Forgets the statements counted so far (when `statements_enabled`); call it before a
    /// phase's CPU meter starts, as psql is a child process.
    pub fn statements_reset(&self) -> Result<(), String> {
        if !Self::statements_enabled() {
            return Ok(());
        }
        self.psql(
            "postgres",
            "create extension if not exists pg_stat_statements",
        )?;
        self.psql("postgres", "select pg_stat_statements_reset()")?;
        Ok(())
    }

    /// The statements database `db` ran since `statements_reset`, most execution time first,
    /// as lines of calls per `unit` (of which there were `tasks`), rows per call, execution µs
    /// per unit, buffer pages read per unit (shared hits and reads: index entries and row
    /// versions walked), plans per call and planning µs per unit (both 0 unless
    /// `pg_stat_statements.track_planning` is on) and the query's start; empty unless
    /// `statements_enabled`.
    pub fn statements_report(&self, db: &str, tasks: usize, unit: &str) -> Result<String, String> {
        if !Self::statements_enabled() {
            return Ok(String::new());
        }
        let tasks = tasks.max(1);
        let out = self.psql(
            "postgres",
            &format!(
                "select calls, rows, total_exec_time, shared_blks_hit + shared_blks_read, \
                        plans, total_plan_time, \
                        left(regexp_replace(query, '\\s+', ' ', 'g'), 110) \
                   from pg_stat_statements s join pg_database d on d.oid = s.dbid \
                  where d.datname = '{db}' order by total_exec_time desc limit 15"
            ),
        )?;
        let mut report = format!("statements of {db} ({tasks} {unit}s):\n");
        for line in out.lines() {
            let mut f = line.splitn(7, '|');
            let num = |s: Option<&str>| s.and_then(|s| s.trim().parse::<f64>().ok());
            let (
                Some(calls),
                Some(rows),
                Some(ms),
                Some(blocks),
                Some(plans),
                Some(plan_ms),
                Some(query),
            ) = (
                num(f.next()),
                num(f.next()),
                num(f.next()),
                num(f.next()),
                num(f.next()),
                num(f.next()),
                f.next(),
            )
            else {
                continue;
            };
            report.push_str(&format!(
                "  {:>7.3} calls/{unit} {:>7.1} rows/call {:>8.1} µs/{unit} {:>7.1} pages/{unit} {:>6.3} plans/call {:>6.1} plan µs/{unit}  {query}\n",
                calls / tasks as f64,
                rows / calls.max(1.0),
                ms * 1000.0 / tasks as f64,
                blocks / tasks as f64,
                plans / calls.max(1.0),
                plan_ms * 1000.0 / tasks as f64,
            ));
        }
        Ok(report)
    }

    /// The postmaster's process id (first line of `postmaster.pid`).
    pub fn postmaster_pid(&self) -> Option<u32> {
        let text = std::fs::read_to_string(self.data.join("postmaster.pid")).ok()?;
        text.lines().next()?.trim().parse().ok()
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let _ = as_pg(&self.bin, "pg_ctl")
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "stop"])
            .output();
    }
}

fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(l.local_addr().map_err(|e| e.to_string())?.port())
}
