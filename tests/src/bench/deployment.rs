//! The daemons a scenario runs against and the PostgreSQL server behind them, with the CPU
//! each side spends: one SQLite daemon, or `--replicas` daemons on one fresh cluster.

use super::daemon::BenchDaemon;
use super::{pg_server, proc_cpu, Args, BenchBackend};

/// The daemons a scenario runs against, and the PostgreSQL server behind them if any.
pub struct Deployment {
    pub daemons: Vec<BenchDaemon>,
    pub server: Option<pg_server::PgServer>,
}

impl Deployment {
    /// `extra_env`: settings the scenario needs (`stress`: a small connection cap).
    pub fn start(args: &Args, extra_env: &[(&str, &str)]) -> Result<Deployment, String> {
        match args.backend {
            BenchBackend::Sqlite => {
                if args.replicas != 1 {
                    return Err("--replicas needs --backend postgres (SQLite is one daemon)".into());
                }
                Ok(Deployment {
                    daemons: vec![BenchDaemon::start(args.sync.as_str(), extra_env)?],
                    server: None,
                })
            }
            BenchBackend::Postgres => {
                let server = pg_server::PgServer::start("huddle")?;
                let mut daemons = Vec::new();
                for _ in 0..args.replicas.max(1) {
                    let mut env = vec![("HUDDLE_DATABASE_URL", server.url.as_str())];
                    env.extend_from_slice(extra_env);
                    daemons.push(BenchDaemon::start(args.sync.as_str(), &env)?);
                }
                Ok(Deployment {
                    daemons,
                    server: Some(server),
                })
            }
        }
    }

    /// Every daemon's CPU seconds.
    pub fn cpu_seconds(&self) -> f64 {
        self.daemons.iter().map(|d| d.cpu_seconds()).sum()
    }

    /// The PostgreSQL server's CPU seconds (postmaster and backends, living and reaped), when
    /// there is one.
    pub fn server_cpu_seconds(&self) -> Option<f64> {
        let pid = self.server.as_ref()?.postmaster_pid()?;
        Some(proc_cpu::tree_cpu_seconds(pid))
    }
}
