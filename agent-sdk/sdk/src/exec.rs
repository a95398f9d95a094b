//! [`ExecHandler`]: a [`Handler`] that runs a program for each task — the generic handler behind
//! `huddle worker --exec PROGRAM ARGS...`.
//!
//! The contract with the program:
//! - it is started as argv (never through a shell), in its own process group, in the worker's
//!   working directory unless one is set;
//! - **stdin** carries the task as JSON (the same object `GET …/tasks/{id}` returns), then EOF;
//! - **environment**: `HUDDLE_TASK_ID`, `HUDDLE_TASK_SUBJECT`, `HUDDLE_TASK_ATTEMPT` (1 on the
//!   first try), `HUDDLE_TASK_JSON` (the task JSON again, omitted past 32 KiB), plus whatever
//!   [`ExecHandler::env`] adds — the CLI adds `HUDDLE_URL`, `HUDDLE_TEAM` and `HUDDLE_TOKEN` so the
//!   program can itself call `huddle msg post`;
//! - **exit code 0** completes the task with the result
//!   `{"exitCode": 0, "stdout": "...", "stderr": "...", "output": <stdout as JSON>}` (`output` only
//!   when stdout is valid JSON; `stdout`/`stderr` keep their last 16 KiB);
//! - **any other exit** fails the task with a reason naming the program, the exit code (or signal)
//!   and the last line of stderr;
//! - when the lease is lost, the worker stops, or the optional timeout passes, the whole process
//!   group is killed (a timeout fails the task with a reason starting `[TIMEOUT]`); whatever the
//!   program leaves running in its group when it exits is killed too.

#![warn(missing_docs)]

use crate::wire::Task;
use crate::worker::{Handler, HandlerResult, TaskContext};
use serde_json::json;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

/// How much of stdout and stderr a result keeps (the end, where summaries are).
const TAIL_BYTES: usize = 16 * 1024;
/// The largest task JSON also passed as `HUDDLE_TASK_JSON`.
const MAX_ENV_JSON: usize = 32 * 1024;

/// Runs `program args...` per task; see the [module docs](self) for the contract.
#[derive(Debug, Clone)]
pub struct ExecHandler {
    program: String,
    args: Vec<String>,
    workdir: Option<PathBuf>,
    env: Vec<(String, String)>,
    timeout: Option<Duration>,
}

impl ExecHandler {
    /// Runs `program` with `args` (as argv, no shell) for each task.
    pub fn new(
        program: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        ExecHandler {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            workdir: None,
            env: Vec::new(),
            timeout: None,
        }
    }

    /// Runs the program in `dir`.
    pub fn workdir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.workdir = Some(dir.into());
        self
    }

    /// Adds an environment variable for the program.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Kills the program and fails the task (`[TIMEOUT] …`) when it runs longer than `timeout`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    async fn run(&self, task: Task, ctx: TaskContext) -> HandlerResult {
        let input = serde_json::to_vec(&task)?;
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .env("HUDDLE_TASK_ID", &task.id)
            .env("HUDDLE_TASK_SUBJECT", &task.subject)
            .env("HUDDLE_TASK_ATTEMPT", (task.attempts + 1).to_string());
        if input.len() <= MAX_ENV_JSON {
            cmd.env("HUDDLE_TASK_JSON", String::from_utf8_lossy(&input).as_ref());
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &self.workdir {
            cmd.current_dir(dir);
        }
        // Its own process group: a terminal's Ctrl-C reaches the worker, which decides, and
        // killing the group takes the program's children with it.
        #[cfg(unix)]
        cmd.process_group(0);
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.program))?;
        let group = GroupKiller(child.id());
        if let Some(mut stdin) = child.stdin.take() {
            // A program that never reads stdin must not block us; errors (EPIPE) are fine.
            tokio::spawn(async move {
                let _ = stdin.write_all(&input).await;
            });
        }
        let stdout = tokio::spawn(read_tail(child.stdout.take()));
        let stderr = tokio::spawn(read_tail(child.stderr.take()));
        let timeout = async {
            match self.timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        let status = tokio::select! {
            s = child.wait() => s.map_err(|e| format!("waiting for {}: {e}", self.program))?,
            _ = ctx.cancelled() => {
                return Err(format!("{} was stopped: the lease was lost or the worker is shutting down", self.program).into());
            }
            _ = timeout => {
                return Err(format!("[TIMEOUT] {} ran longer than {:?} and was killed", self.program, self.timeout.unwrap_or_default()).into());
            }
        };
        // Leftovers in the group (a backgrounded grandchild) would hold the pipes open.
        drop(group);
        let grace = Duration::from_secs(2);
        let stdout = tokio::time::timeout(grace, stdout)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        let stderr = tokio::time::timeout(grace, stderr)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        if status.success() {
            let mut result = json!({ "exitCode": 0, "stdout": stdout, "stderr": stderr });
            if let Ok(output) = serde_json::from_str::<serde_json::Value>(stdout.trim()) {
                result["output"] = output;
            }
            Ok(result)
        } else {
            Err(self.failure(status, &stderr).into())
        }
    }

    fn failure(&self, status: ExitStatus, stderr: &str) -> String {
        let how = match status.code() {
            Some(code) => format!("exited with code {code}"),
            None => signal_of(status)
                .map_or("was killed".into(), |s| format!("was killed by signal {s}")),
        };
        match stderr.lines().rev().map(str::trim).find(|l| !l.is_empty()) {
            Some(line) => format!("{} {how}: {line}", self.program),
            None => format!("{} {how}", self.program),
        }
    }
}

impl Handler for ExecHandler {
    async fn handle(&self, task: Task, ctx: TaskContext) -> HandlerResult {
        self.run(task, ctx).await
    }
}

#[cfg(unix)]
fn signal_of(status: ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

#[cfg(not(unix))]
fn signal_of(_: ExitStatus) -> Option<i32> {
    None
}

/// Kills the program's whole process group when the run ends early (cancelled, timed out, or
/// the handler dropped); after a normal exit the group is usually empty and this does nothing.
struct GroupKiller(Option<u32>);

impl Drop for GroupKiller {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self.0.and_then(|p| i32::try_from(p).ok()) {
            use nix::sys::signal::{killpg, Signal};
            let _ = killpg(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
}

/// Reads a pipe to its end, keeping only the last [`TAIL_BYTES`].
async fn read_tail(pipe: Option<impl AsyncRead + Unpin>) -> String {
    let Some(mut pipe) = pipe else {
        return String::new();
    };
    let mut kept = Vec::new();
    let mut cut = false;
    let mut buf = [0u8; 8192];
    while let Ok(n) = pipe.read(&mut buf).await {
        if n == 0 {
            break;
        }
        kept.extend_from_slice(&buf[..n]);
        if kept.len() > TAIL_BYTES {
            kept.drain(..kept.len() - TAIL_BYTES);
            cut = true;
        }
    }
    let text = String::from_utf8_lossy(&kept).into_owned();
    if cut {
        format!("…{text}")
    } else {
        text
    }
}
