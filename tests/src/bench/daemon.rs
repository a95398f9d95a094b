//! A real release `huddled` as a child process on a fresh data directory, for benchmarks.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub const ADMIN: &str = "bench-admin-token";

pub struct BenchDaemon {
    child: Child,
    pub url: String,
    pub pid: u32,
    _dir: tempfile::TempDir,
}

/// The release `huddled` next to this binary (`cargo run --release -p huddle-tests` builds the
/// workspace's binaries into the same directory).
pub fn huddled_binary() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = exe.parent().ok_or("no parent dir")?;
    let candidates = [dir.join("huddled"), dir.join("../huddled")];
    candidates.into_iter().find(|p| p.exists()).ok_or_else(|| {
        format!(
            "huddled is not built next to {}: run `cargo build --release --bin huddled`",
            exe.display()
        )
    })
}

impl BenchDaemon {
    /// Starts huddled with `synchronous` (`full` or `normal`) and extra environment settings.
    pub fn start(synchronous: &str, extra_env: &[(&str, &str)]) -> Result<BenchDaemon, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mut cmd = Command::new(huddled_binary()?);
        cmd.args(["--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.path())
            .env("HUDDLE_ADMIN_TOKEN", ADMIN)
            .env("HUDDLE_STORAGE_SYNCHRONOUS", synchronous)
            .env("HUDDLE_LOG", "warn,huddle_daemon=info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in extra_env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().map_err(|e| format!("starting huddled: {e}"))?;
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let mut lines = BufReader::new(stderr).lines();
        let url = loop {
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(rest) = line.split("http://").nth(1) {
                        break format!(
                            "http://{}",
                            rest.split_whitespace().next().unwrap_or_default()
                        );
                    }
                }
                _ => return Err("huddled exited before listening".into()),
            }
        };
        // Keep draining the log so the daemon never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines.map_while(Result::ok) {});
        let pid = child.id();
        Ok(BenchDaemon {
            child,
            url,
            pid,
            _dir: dir,
        })
    }

    /// Peak resident set size so far (VmHWM), in bytes.
    pub fn peak_rss(&self) -> u64 {
        proc_status_kb(self.pid, "VmHWM:") * 1024
    }

    /// Current resident set size (VmRSS), in bytes.
    pub fn rss(&self) -> u64 {
        proc_status_kb(self.pid, "VmRSS:") * 1024
    }
}

fn proc_status_kb(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

impl Drop for BenchDaemon {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .status();
        for _ in 0..500 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
    }
}
