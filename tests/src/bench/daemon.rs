//! A real release `huddled` as a child process on a fresh data directory, for benchmarks.

use crate::process::HuddledProcess;

pub const ADMIN: &str = "bench-admin-token-0123456789abcdef";

pub struct BenchDaemon {
    process: HuddledProcess,
    pub url: String,
    dir: tempfile::TempDir,
}

impl BenchDaemon {
    /// Starts huddled with `synchronous` (`full` or `normal`) and extra environment settings.
    pub fn start(synchronous: &str, extra_env: &[(&str, &str)]) -> Result<BenchDaemon, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mut env = vec![
            ("HUDDLE_ADMIN_TOKEN", ADMIN),
            ("HUDDLE_STORAGE_SYNCHRONOUS", synchronous),
        ];
        env.extend_from_slice(extra_env);
        let process = HuddledProcess::start(dir.path(), &env)?;
        Ok(BenchDaemon {
            url: process.url.clone(),
            process,
            dir,
        })
    }

    pub fn peak_rss(&self) -> u64 {
        self.process.peak_rss()
    }

    pub fn cpu_seconds(&self) -> f64 {
        self.process.cpu_seconds()
    }

    /// The daemon's SQLite file (`<data dir>/huddle.db`).
    pub fn sqlite_file(&self) -> std::path::PathBuf {
        self.dir.path().join("huddle.db")
    }

    pub fn pid(&self) -> u32 {
        self.process.pid
    }

    pub fn rss(&self) -> u64 {
        self.process.rss()
    }
}
