//! `huddled` as a real child process on a given data directory: for crash tests (SIGKILL) and
//! benchmarks (release build, peak RSS).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Log lines a daemon keeps for a failing test to show (its last warnings and errors).
const LOG_TAIL_LINES: usize = 60;

/// A `huddled` to start instead of the one built beside the running binary (`huddle-bench
/// --daemon`: two builds measured side by side by the same bench).
static BINARY_OVERRIDE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Makes every later start use `path`; only the first call counts.
pub fn use_huddled_binary(path: PathBuf) {
    let _ = BINARY_OVERRIDE.set(path);
}

/// The `huddled` built beside the running binary: `target/<profile>/huddled` for test binaries
/// (which live in `deps/`) and for binaries such as `huddle-bench`.
pub fn huddled_binary() -> Result<PathBuf, String> {
    if let Some(path) = BINARY_OVERRIDE.get() {
        return Ok(path.clone());
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = exe.parent().ok_or("no parent dir")?;
    [dir.join("huddled"), dir.join("../huddled")]
        .into_iter()
        .find(|p| p.exists())
        .ok_or_else(|| format!("huddled is not built beside {}: run `cargo build --bin huddled` (scripts/test does)", exe.display()))
}

/// Runs `huddled ARGS` to completion (a one-shot command such as `migrate` or `backup`, or a
/// start expected to fail) with `env`; returns its exit status and its log (stderr).
pub fn run_huddled(args: &[&str], env: &[(&str, &str)]) -> (std::process::ExitStatus, String) {
    let mut cmd = Command::new(huddled_binary().unwrap_or_else(|e| panic!("{e}")));
    cmd.args(args)
        .env("HUDDLE_LOG", "warn,huddle_daemon=info")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("running huddled");
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub struct HuddledProcess {
    child: Child,
    pub url: String,
    pub pid: u32,
    /// The last [`LOG_TAIL_LINES`] lines of its log, shown when a test fails with it running.
    log_tail: Arc<Mutex<std::collections::VecDeque<String>>>,
}

impl HuddledProcess {
    /// Starts `huddled --listen 127.0.0.1:0 --data-dir DIR` with `env`, and waits for its
    /// "listening" line to learn the address.
    pub fn start(data_dir: &Path, env: &[(&str, &str)]) -> Result<HuddledProcess, String> {
        Self::start_args(data_dir, &[], env)
    }

    /// Like [`HuddledProcess::start`], with more flags (such as `--no-migrate`). A daemon that
    /// exits instead returns its log as the error.
    pub fn start_args(
        data_dir: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Result<HuddledProcess, String> {
        Self::start_watching(data_dir, args, env, |_| {})
    }

    /// Like [`HuddledProcess::start_args`], calling `on_line` with each log line written
    /// before it listens (to act on what start-up says, such as waiting for a database).
    pub fn start_watching(
        data_dir: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        mut on_line: impl FnMut(&str),
    ) -> Result<HuddledProcess, String> {
        let mut cmd = Command::new(huddled_binary()?);
        cmd.args(["--listen", "127.0.0.1:0", "--data-dir"])
            .arg(data_dir)
            .args(args)
            .env("HUDDLE_LOG", "warn,huddle_daemon=info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().map_err(|e| format!("starting huddled: {e}"))?;
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let mut lines = BufReader::new(stderr).lines();
        let mut log = String::new();
        let url = loop {
            match lines.next() {
                Some(Ok(line)) => {
                    on_line(&line);
                    log.push_str(&line);
                    log.push('\n');
                    if let Some(rest) = line.split("listening on http://").nth(1) {
                        break format!(
                            "http://{}",
                            rest.split_whitespace().next().unwrap_or_default()
                        );
                    }
                }
                _ => return Err(format!("huddled exited before listening:\n{log}")),
            }
        };
        // Keep draining the log so the daemon never blocks on a full pipe; with
        // HUDDLE_PROCESS_LOG=1 its lines are shown (the daemon logs warnings and errors),
        // and its last lines always are when a test panics (see `Drop`).
        let show = std::env::var("HUDDLE_PROCESS_LOG").as_deref() == Ok("1");
        let log_tail = Arc::new(Mutex::new(std::collections::VecDeque::new()));
        let tail = log_tail.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                if show {
                    eprintln!("[huddled] {line}");
                }
                let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
                if tail.len() == LOG_TAIL_LINES {
                    tail.pop_front();
                }
                tail.push_back(line);
            }
        });
        let pid = child.id();
        Ok(HuddledProcess {
            child,
            url,
            pid,
            log_tail,
        })
    }

    /// SIGKILL: no shutdown, no checkpoint — the power-cut case.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM and wait (up to 30 s) for a clean exit.
    pub fn stop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .status();
        for _ in 0..3000 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.kill9();
    }

    /// Peak resident set size so far (VmHWM), in bytes.
    pub fn peak_rss(&self) -> u64 {
        proc_status_kb(self.pid, "VmHWM:") * 1024
    }

    /// CPU time the daemon has used so far (user + system), in seconds.
    pub fn cpu_seconds(&self) -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)).unwrap_or_default();
        // Fields after the command name, which is in parentheses and may contain spaces.
        let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        // utime and stime are fields 14 and 15 of /proc/PID/stat (11 and 12 after the name).
        (ticks(11) + ticks(12)) / 100.0
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

impl Drop for HuddledProcess {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let tail = self.log_tail.lock().unwrap_or_else(|e| e.into_inner());
            eprintln!(
                "--- the last {} log lines of huddled {} (pid {}) ---",
                tail.len(),
                self.url,
                self.pid
            );
            for line in tail.iter() {
                eprintln!("[huddled {}] {line}", self.pid);
            }
        }
        if let Ok(None) = self.child.try_wait() {
            self.stop();
        }
    }
}
