//! Running a runner: argv only (never a shell), its own process group, output captured, and a
//! timeout that stops the whole group — SIGTERM first so runners that manage their own children
//! (nextest) can clean up, then SIGKILL for whatever is left.

use crate::limits::HeadTail;
use crate::live::{OutputTap, Stream};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::task::JoinHandle;

/// The exit code of a run killed at its timeout, as coreutils' `timeout` reports it.
pub const TIMEOUT_EXIT_CODE: i32 = 124;

/// A program to run: argv and environment, no shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The program, resolved to a path.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Variables set on top of the inherited environment.
    pub env: Vec<(OsString, OsString)>,
    /// The working directory.
    pub cwd: PathBuf,
}

impl Invocation {
    /// An invocation of `program` in `cwd` with no arguments yet.
    pub fn new(program: impl Into<PathBuf>, cwd: impl Into<PathBuf>) -> Self {
        Invocation {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: cwd.into(),
        }
    }

    /// Appends one argument.
    pub fn arg(&mut self, arg: impl Into<OsString>) -> &mut Self {
        self.args.push(arg.into());
        self
    }

    /// The command line for reports and logs (not for execution).
    pub fn argv(&self) -> Vec<String> {
        std::iter::once(self.program.as_os_str())
            .chain(self.args.iter().map(OsString::as_os_str))
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }
}

/// Time limits of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// How long the runner may take before its process group is stopped.
    pub timeout: Duration,
    /// How long after SIGTERM before SIGKILL, and how long to wait for output pipes to close
    /// after the runner exits.
    pub grace: Duration,
}

/// What a finished (or killed) run left behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// The exit code; 128 + signal when killed by a signal; 124 on timeout.
    pub exit_code: i32,
    /// Everything written to stdout.
    pub stdout: Vec<u8>,
    /// Everything written to stderr.
    pub stderr: Vec<u8>,
    /// True when the timeout stopped the run.
    pub timed_out: bool,
    /// Wall-clock time from spawn to exit.
    pub elapsed: Duration,
}

type Buffer = Arc<Mutex<HeadTail>>;

async fn read_into<R: AsyncRead + Unpin>(pipe: Option<R>, buf: Buffer, tap: Option<Tap>) {
    let Some(mut pipe) = pipe else { return };
    let mut chunk = vec![0u8; 64 * 1024];
    while let Ok(n) = pipe.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        if let Some((tap, stream)) = &tap {
            tap(*stream, &chunk[..n]);
        }
        buf.lock().expect("output buffer").push(&chunk[..n]);
    }
}

/// Where a stream's chunks also go as they arrive.
type Tap = (OutputTap, Stream);

#[cfg(unix)]
fn signal_group(pgid: Option<u32>, signal: nix::sys::signal::Signal) {
    use nix::unistd::Pid;
    if let Some(pgid) = pgid.and_then(|p| i32::try_from(p).ok()) {
        // ESRCH (the group is already gone) is the expected, harmless failure.
        let _ = nix::sys::signal::killpg(Pid::from_raw(pgid), signal);
    }
}

/// Runs `inv` to completion or to its timeout, capturing stdout and stderr whole.
pub async fn run(inv: &Invocation, limits: Limits) -> std::io::Result<Captured> {
    run_capped(inv, limits, None, None).await
}

/// Runs `inv` like [`run`], keeping at most `stdout_cap` and `stderr_cap` bytes of each
/// stream in memory (the start and the end, with a marker between; `None`: everything), so
/// a runner that prints a huge failure cannot make huddle hold all of it.
pub async fn run_capped(
    inv: &Invocation,
    limits: Limits,
    stdout_cap: Option<usize>,
    stderr_cap: Option<usize>,
) -> std::io::Result<Captured> {
    // Output also goes, as it arrives, to the run's tap when a caller counts ([`crate::live`]).
    let tap = crate::live::current_tap();
    // Inside a sandboxed run, bwrap runs it ([`crate::sandbox::confined`]).
    let inv = &*crate::sandbox::wrap_current(inv);
    let mut cmd = tokio::process::Command::new(&inv.program);
    cmd.args(&inv.args)
        .current_dir(&inv.cwd)
        .envs(inv.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    let started = Instant::now();
    let mut child = cmd.spawn()?;
    let pgid = child.id();
    #[cfg(not(unix))]
    let _ = pgid;
    let out: Buffer = Arc::new(Mutex::new(HeadTail::new(stdout_cap)));
    let err: Buffer = Arc::new(Mutex::new(HeadTail::new(stderr_cap)));
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let (out2, err2) = (out.clone(), err.clone());
    let out_tap = tap.clone().map(|t| (t, Stream::Stdout));
    let err_tap = tap.map(|t| (t, Stream::Stderr));
    let mut reader: JoinHandle<()> = tokio::spawn(async move {
        tokio::join!(
            read_into(stdout, out2, out_tap),
            read_into(stderr, err2, err_tap)
        );
    });

    let (status, timed_out) = match tokio::time::timeout(limits.timeout, child.wait()).await {
        Ok(status) => (status?, false),
        Err(_) => {
            #[cfg(unix)]
            signal_group(pgid, nix::sys::signal::Signal::SIGTERM);
            let status = match tokio::time::timeout(limits.grace, child.wait()).await {
                Ok(status) => status?,
                Err(_) => {
                    child.start_kill()?;
                    child.wait().await?
                }
            };
            // Grandchildren that outlived the runner (or ignored SIGTERM) go now.
            #[cfg(unix)]
            signal_group(pgid, nix::sys::signal::Signal::SIGKILL);
            (status, true)
        }
    };
    let elapsed = started.elapsed();
    // A leftover process in the group may hold the pipes open: give it the grace period,
    // then stop the group so the pipes close; past a second grace period, stop reading.
    if tokio::time::timeout(limits.grace, &mut reader)
        .await
        .is_err()
    {
        #[cfg(unix)]
        signal_group(pgid, nix::sys::signal::Signal::SIGKILL);
        if tokio::time::timeout(limits.grace, &mut reader)
            .await
            .is_err()
        {
            reader.abort();
        }
    }
    let exit_code = if timed_out {
        TIMEOUT_EXIT_CODE
    } else {
        exit_code_of(status)
    };
    let take = |b: Buffer| {
        std::mem::replace(&mut *b.lock().expect("output buffer"), HeadTail::new(None)).into_bytes()
    };
    Ok(Captured {
        exit_code,
        stdout: take(out),
        stderr: take(err),
        timed_out,
        elapsed,
    })
}

fn exit_code_of(status: std::process::ExitStatus) -> i32 {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return 128 + sig;
        }
    }
    status.code().unwrap_or(1)
}
