//! Counts while a run goes: how many tests finished and how many failed so far, read from what
//! the runner streams — never guessed from time. `huddle test` shows them on its live line.
//!
//! Where the counts come from, per framework:
//! - pytest, jest and vitest (3 and later): the progress lines huddle's own reporters append
//!   as each test ends (`pytest-huddle-progress.jsonl`, `jest-progress.jsonl`,
//!   which vitest's reporter writes too, in the run directory), read as they grow (jest names the tests it
//!   runs, not the skipped ones);
//! - go: `go test -json` events on stdout (`pass`/`fail`/`skip` of a test or subtest);
//! - cargo: libtest's `test NAME ... ok|FAILED|ignored` lines on stdout (doc tests too),
//!   cargo-nextest's `PASS [..]`/`FAIL [..]` lines and the skipped count of its `Starting`
//!   line on stderr;
//! - mocha and node:test report only at the end: their counts stay at zero until then.
//!
//! A caller asks for counts by running [`run_tests`](crate::run::run_tests) inside
//! [`with_live_counts`]; without it nothing is parsed.

use crate::framework::Framework;
use std::future::Future;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The most of one output line looked at: the outcome is near a line's start, and a line can
/// carry a failure text of any size.
const LINE_PREFIX: usize = 16 * 1024;
/// How often a progress file is read for new lines.
const TAIL_EVERY: Duration = Duration::from_millis(200);

/// Tests finished and failed so far in the current run.
#[derive(Debug, Default)]
pub struct LiveCounts {
    done: AtomicU64,
    failed: AtomicU64,
}

impl LiveCounts {
    /// (finished, failed or errored) so far.
    pub fn snapshot(&self) -> (u64, u64) {
        (
            self.done.load(Ordering::Relaxed),
            self.failed.load(Ordering::Relaxed),
        )
    }

    fn skipped(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    fn count(&self, failed: bool) {
        self.done.fetch_add(1, Ordering::Relaxed);
        if failed {
            self.failed.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A failure that is not a test's (a file that failed to load).
    fn count_failure(&self) {
        self.failed.fetch_add(1, Ordering::Relaxed);
    }
}

tokio::task_local! {
    static LIVE: Arc<LiveCounts>;
    static TAP: OutputTap;
}

/// Runs `run` (a [`run_tests`](crate::run::run_tests) call) with `counts` kept up to date
/// while its runner works.
pub async fn with_live_counts<F: Future>(counts: Arc<LiveCounts>, run: F) -> F::Output {
    LIVE.scope(counts, run).await
}

/// The counts asked for by the caller, if any.
pub(crate) fn current() -> Option<Arc<LiveCounts>> {
    LIVE.try_with(Arc::clone).ok()
}

/// Runs `run` (one run of `framework`) with every runner process it starts — the suite, and
/// helpers such as cargo's doc tests — handing its output to the framework's tap, when the
/// caller asked for counts and the framework reports on its output.
pub(crate) async fn tapping<F: Future>(framework: Framework, run: F) -> F::Output {
    match current().and_then(|c| output_tap(framework, c)) {
        Some(tap) => TAP.scope(tap, run).await,
        None => run.await,
    }
}

/// The tap of the run in progress ([`tapping`]), if any.
pub(crate) fn current_tap() -> Option<OutputTap> {
    TAP.try_with(Arc::clone).ok()
}

/// Which output stream a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Receives the runner's output as it arrives.
pub type OutputTap = Arc<dyn Fn(Stream, &[u8]) + Send + Sync>;

/// A tap counting `framework`'s result lines on stdout and stderr, when it reports on them.
pub(crate) fn output_tap(framework: Framework, counts: Arc<LiveCounts>) -> Option<OutputTap> {
    let parse: fn(Stream, &[u8]) -> Line = match framework {
        Framework::Go => go_event,
        Framework::Cargo => cargo_line,
        _ => return None,
    };
    // Per stream: its lines, and whether the runner's closing summary (which repeats
    // results) has begun.
    let state = Mutex::new([(Lines::default(), false), (Lines::default(), false)]);
    Some(Arc::new(move |stream, chunk| {
        let mut state = lock(&state);
        let (lines, summary) = &mut state[usize::from(stream == Stream::Stderr)];
        lines.feed(chunk, |line| match parse(stream, line) {
            Line::Ended { failed } if !*summary => counts.count(failed),
            Line::Skipped(n) => counts.skipped(n),
            Line::Summary => *summary = true,
            _ => {}
        });
    }))
}

/// Follows `framework`'s progress file in `run_dir` until dropped (pytest and jest).
pub(crate) fn follow_progress_file(
    framework: Framework,
    run_dir: &Path,
    counts: Arc<LiveCounts>,
) -> Option<Following> {
    let (file, parse): (&str, ProgressParser) = match framework {
        Framework::Pytest => ("pytest-huddle-progress.jsonl", pytest_line),
        Framework::Jest => ("jest-progress.jsonl", jest_line),
        // vitest's progress reporter writes jest's lines (`adapters/vitest.rs`).
        Framework::Vitest => ("jest-progress.jsonl", jest_line),
        _ => return None,
    };
    let reader = Arc::new(Mutex::new(ProgressReader {
        tail: Tail::new(run_dir.join(file)),
        parse,
        counts,
    }));
    let reading = reader.clone();
    let task = tokio::spawn(async move {
        let mut tick = tokio::time::interval(TAIL_EVERY);
        loop {
            tick.tick().await;
            lock(&reading).read_new();
        }
    });
    Some(Following { task, reader })
}

/// Stops following a progress file when dropped, after reading what is left of it (so the
/// counts are whole once the run is over).
pub(crate) struct Following {
    task: tokio::task::JoinHandle<()>,
    reader: Arc<Mutex<ProgressReader>>,
}

impl Drop for Following {
    fn drop(&mut self) {
        self.task.abort();
        lock(&self.reader).read_new();
    }
}

struct ProgressReader {
    tail: Tail,
    parse: ProgressParser,
    counts: Arc<LiveCounts>,
}

/// Reads one progress line.
type ProgressParser = fn(&[u8]) -> Option<Progress>;

impl ProgressReader {
    fn read_new(&mut self) {
        let (parse, counts) = (self.parse, &self.counts);
        self.tail.read_new(|line| match parse(line) {
            Some(Progress::Test { failed }) => counts.count(failed),
            Some(Progress::Broken) => counts.count_failure(),
            None => {}
        });
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What one line of output says.
enum Line {
    /// A test ended.
    Ended {
        failed: bool,
    },
    /// This many tests are skipped without a line of their own.
    Skipped(u64),
    /// The runner's closing summary begins; results after it are repeats.
    Summary,
    Other,
}

enum Progress {
    Test { failed: bool },
    Broken,
}

/// Splits a stream into lines, keeping at most [`LINE_PREFIX`] bytes of each.
#[derive(Default)]
struct Lines {
    line: Vec<u8>,
}

impl Lines {
    fn feed(&mut self, mut chunk: &[u8], mut each: impl FnMut(&[u8])) {
        while let Some(end) = chunk.iter().position(|&b| b == b'\n') {
            self.keep(&chunk[..end]);
            each(&self.line);
            self.line.clear();
            chunk = &chunk[end + 1..];
        }
        self.keep(chunk);
    }

    fn keep(&mut self, bytes: &[u8]) {
        let room = LINE_PREFIX.saturating_sub(self.line.len());
        self.line.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

/// A file read from where the last read stopped, as it grows.
struct Tail {
    path: PathBuf,
    offset: u64,
    lines: Lines,
}

impl Tail {
    fn new(path: PathBuf) -> Tail {
        Tail {
            path,
            offset: 0,
            lines: Lines::default(),
        }
    }

    fn read_new(&mut self, each: impl FnMut(&[u8])) {
        let Ok(mut file) = std::fs::File::open(&self.path) else {
            return; // not written yet
        };
        let mut fresh = Vec::new();
        if file.seek(SeekFrom::Start(self.offset)).is_err() || file.read_to_end(&mut fresh).is_err()
        {
            return;
        }
        self.offset += fresh.len() as u64;
        self.lines.feed(&fresh, each);
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// `["test", [nodeid, outcome, …]]` or `["error", nodeid, text]` (a collector that failed).
/// The nodeid is a JSON string, so an outcome in it would have its quotes escaped.
fn pytest_line(line: &[u8]) -> Option<Progress> {
    if line.starts_with(b"[\"error\"") {
        return Some(Progress::Broken);
    }
    if !line.starts_with(b"[\"test\"") {
        return None;
    }
    let outcome = ["passed", "failed", "error", "skipped"]
        .into_iter()
        .find(|o| contains(line, format!("\", \"{o}\", ").as_bytes()))?;
    Some(Progress::Test {
        failed: matches!(outcome, "failed" | "error"),
    })
}

/// `{"event":"result",…,"status":"failed",…}` or `{"event":"file-error",…}`.
fn jest_line(line: &[u8]) -> Option<Progress> {
    if line.starts_with(b"{\"event\":\"file-error\"") {
        return Some(Progress::Broken);
    }
    if !line.starts_with(b"{\"event\":\"result\"") {
        return None;
    }
    Some(Progress::Test {
        failed: contains(line, b"\"status\":\"failed\""),
    })
}

/// A `go test -json` event ending a test or subtest.
fn go_event(stream: Stream, line: &[u8]) -> Line {
    go_ended(stream, line).map_or(Line::Other, |failed| Line::Ended { failed })
}

fn go_ended(stream: Stream, line: &[u8]) -> Option<bool> {
    #[derive(serde::Deserialize)]
    struct Event<'a> {
        #[serde(rename = "Action", borrow)]
        action: &'a str,
        #[serde(rename = "Test", default, borrow)]
        test: Option<&'a str>,
    }
    if stream != Stream::Stdout || !line.starts_with(b"{") {
        return None;
    }
    let event: Event = serde_json::from_slice(line).ok()?;
    // Subtests included: the report lists them too.
    event.test?;
    match event.action {
        "pass" | "skip" => Some(false),
        "fail" => Some(true),
        _ => None,
    }
}

/// libtest's `test NAME ... ok` on stdout, or cargo-nextest's `PASS [ 0.01s] …` on stderr
/// (until its `Summary [ 1.2s] …` line, after which it repeats the failures).
fn cargo_line(stream: Stream, line: &[u8]) -> Line {
    let text = String::from_utf8_lossy(line);
    if stream == Stream::Stderr {
        let text = text.trim_start();
        if text.starts_with("Summary [") {
            return Line::Summary;
        }
        // `Starting 12 tests across 2 binaries (1 test skipped)`: nextest names no skipped test.
        if let Some(skipped) = text.strip_prefix("Starting ").and_then(nextest_skipped) {
            return Line::Skipped(skipped);
        }
    }
    cargo_ended(stream, &text).map_or(Line::Other, |failed| Line::Ended { failed })
}

fn nextest_skipped(text: &str) -> Option<u64> {
    let (_, tail) = text.rsplit_once('(')?;
    let (n, rest) = tail.split_once(' ')?;
    rest.starts_with("test").then_some(())?;
    rest.trim_end()
        .ends_with("skipped)")
        .then(|| n.parse().ok())?
}

fn cargo_ended(stream: Stream, text: &str) -> Option<bool> {
    match stream {
        Stream::Stdout => {
            let rest = text.strip_prefix("test ")?;
            let (_, outcome) = rest.rsplit_once(" ... ")?;
            match outcome.trim_end() {
                "ok" | "ignored" => Some(false),
                "FAILED" => Some(true),
                o if o.starts_with("ignored, ") => Some(false),
                _ => None,
            }
        }
        Stream::Stderr => {
            let (status, rest) = text.trim_start().split_once(' ')?;
            if !rest.trim_start().starts_with('[') {
                return None;
            }
            match status {
                "PASS" | "SKIP" => Some(false),
                "FAIL" | "TIMEOUT" | "SIGSEGV" | "SIGABRT" | "SIGKILL" | "ABORT" => Some(true),
                _ => None,
            }
        }
    }
}

#[cfg(test)]
#[path = "live_tests.rs"]
mod tests;
