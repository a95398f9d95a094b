//! `huddle demo`'s daemon: the `huddled` binary as a child process on a temporary SQLite file,
//! listening on a free port that its "listening on http://ADDR" log line reveals.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// A running `huddled` started by the demo.
pub struct DemoDaemon {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// The admin token the daemon generated.
    pub admin_token: String,
}

/// `huddled` beside the running `huddle`, else on `PATH`.
pub fn find_huddled() -> Result<PathBuf, String> {
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot locate the huddle binary: {e}"))?;
    let beside = exe.parent().map(|d| d.join("huddled"));
    if let Some(p) = beside.as_ref().filter(|p| p.is_file()) {
        return Ok(p.clone());
    }
    if let Some(path) = std::env::var_os("PATH") {
        if let Some(p) = std::env::split_paths(&path)
            .map(|d| d.join("huddled"))
            .find(|p| p.is_file())
        {
            return Ok(p);
        }
    }
    Err(format!(
        "huddled not found next to {} or on PATH: build it with `cargo build --bin huddled` (or install it beside huddle)",
        exe.display()
    ))
}

impl DemoDaemon {
    /// Starts `huddled --listen 127.0.0.1:0 --data-dir DATA`, and waits for its listening
    /// line. The daemon generates its admin token into `DATA/admin-token` (mode 0600), so a
    /// kept demo directory can be served again with the same token.
    pub async fn start(data_dir: &Path) -> Result<DemoDaemon, String> {
        let bin = find_huddled()?;
        let mut cmd = Command::new(&bin);
        // The demo's daemon is temporary and on SQLite whatever the caller's shell says: none
        // of the caller's HUDDLE_* settings (a database URL, an admin token, a config file…)
        // reach it.
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("HUDDLE_") {
                cmd.env_remove(&key);
            }
        }
        let mut child = cmd
            .args(["--listen", "127.0.0.1:0", "--data-dir"])
            .arg(data_dir)
            .env("HUDDLE_LOG", "info,tower_http=warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
        let stderr = child.stderr.take().ok_or("no stderr from huddled")?;
        let mut lines = BufReader::new(stderr).lines();
        let mut seen = Vec::new();
        let find = async {
            while let Ok(Some(line)) = lines.next_line().await {
                let plain = strip_ansi(&line);
                if let Some(rest) = plain.split("listening on http://").nth(1) {
                    let addr = rest
                        .split_whitespace()
                        .next()
                        .unwrap_or_default()
                        .to_string();
                    return Some(addr);
                }
                seen.push(plain);
            }
            None
        };
        let addr = tokio::time::timeout(Duration::from_secs(60), find)
            .await
            .map_err(|_| "huddled did not start listening within 60s".to_string())?;
        let Some(addr) = addr else {
            let _ = child.wait().await;
            return Err(format!(
                "huddled exited before listening: {}",
                seen.join(" | ")
            ));
        };
        // Keep draining its log so it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let token_file = data_dir.join("admin-token");
        let admin_token = std::fs::read_to_string(&token_file)
            .map_err(|e| format!("cannot read {}: {e}", token_file.display()))?
            .trim()
            .to_string();
        Ok(DemoDaemon {
            child,
            url: format!("http://{addr}"),
            admin_token,
        })
    }

    /// SIGTERM, then waits up to 10 s for a clean exit before killing it.
    pub async fn stop(mut self) {
        #[cfg(unix)]
        if let Some(pid) = self.child.id() {
            use nix::sys::signal::{kill, Signal};
            use nix::unistd::Pid;
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGTERM);
        }
        if tokio::time::timeout(Duration::from_secs(10), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
