//! How much of a run huddle keeps. A test may fail with a message of any size (a 50 MB diff,
//! a dump of a whole page); copied whole into every artefact and every message to a model it
//! costs memory and disk many times over. Failure texts are capped per test and per run, and
//! output streams and the runner's own files per stream, each with a visible marker saying
//! what was cut; old run directories are pruned.

use crate::report::TestResult;
use std::borrow::Cow;

/// The start of every truncation marker huddle writes.
pub const TRUNCATED: &str = "[… huddle truncated";

/// A failure text kept once the run's budget is spent: its start and end.
const AFTER_BUDGET: usize = 4 * 1024;

/// How much of a run huddle keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLimits {
    /// Bytes of one test's failure text kept: the start and the end, with a marker between.
    pub per_test: usize,
    /// Bytes of failure text kept across the whole run; once spent, each further failure
    /// keeps 4 KiB.
    pub per_run: usize,
    /// Bytes kept of stdout and of stderr (start and end, in memory and in the run
    /// directory), and the largest runner file kept in the run directory. Runners whose
    /// results huddle reads from stdout (go, cargo, mocha 8) keep stdout whole in memory.
    pub per_stream: usize,
    /// Run directories kept: the newest `keep_runs`; older ones are removed when a run
    /// finishes. 0 keeps every run. Default 20, or `HUDDLE_KEEP_RUNS`.
    pub keep_runs: usize,
    /// Bytes of artifacts (screenshots, traces, videos, the raw report) one run keeps;
    /// past it the largest are removed, and listed as removed ([`crate::artifacts`]).
    pub artifacts: u64,
}

impl Default for OutputLimits {
    fn default() -> Self {
        OutputLimits {
            per_test: 64 * 1024,
            per_run: 4 * 1024 * 1024,
            per_stream: 16 * 1024 * 1024,
            keep_runs: std::env::var("HUDDLE_KEEP_RUNS")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(20),
            artifacts: 256 * 1024 * 1024,
        }
    }
}

/// The largest char boundary at or below `at`.
fn floor_boundary(text: &str, mut at: usize) -> usize {
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// `text` within `keep` bytes (plus the marker): its first three quarters and last quarter,
/// with a marker naming how much was cut. Borrowed when it fits.
pub fn truncate_middle(text: &str, keep: usize) -> Cow<'_, str> {
    if text.len() <= keep {
        return Cow::Borrowed(text);
    }
    let head = floor_boundary(text, keep * 3 / 4);
    let tail = floor_boundary(text, text.len() - keep / 4);
    let tail = if tail < head { head } else { tail };
    Cow::Owned(format!(
        "{}\n{TRUNCATED} {} of {} bytes here …]\n{}",
        &text[..head],
        tail - head,
        text.len(),
        &text[tail..]
    ))
}

/// Caps every failure text of `tests` by `limits`, in report order.
pub fn cap_failures(tests: &mut [TestResult], limits: &OutputLimits) {
    let mut left = limits.per_run;
    for t in tests {
        let Some(text) = t.longrepr.as_mut() else {
            continue;
        };
        let keep = limits.per_test.min(left.max(AFTER_BUDGET));
        if let Cow::Owned(capped) = truncate_middle(text, keep) {
            *text = capped;
        }
        left = left.saturating_sub(text.len());
    }
}

/// Bytes kept in memory from a stream: all of them up to `cap`, then the first and last
/// halves with a marker between.
#[derive(Debug)]
pub(crate) struct HeadTail {
    cap: Option<usize>,
    head: Vec<u8>,
    tail: Vec<u8>,
    dropped: u64,
}

impl HeadTail {
    /// A buffer keeping at most `cap` bytes; `None` keeps everything.
    pub fn new(cap: Option<usize>) -> Self {
        HeadTail {
            cap,
            head: Vec::new(),
            tail: Vec::new(),
            dropped: 0,
        }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        let Some(cap) = self.cap else {
            self.head.extend_from_slice(bytes);
            return;
        };
        let room = (cap / 2).saturating_sub(self.head.len());
        let taken = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..taken]);
        bytes = &bytes[taken..];
        if bytes.is_empty() {
            return;
        }
        self.tail.extend_from_slice(bytes);
        let keep = cap - cap / 2;
        // Drop the oldest tail bytes in batches, so each byte moves at most once or twice.
        if self.tail.len() > keep * 2 {
            let excess = self.tail.len() - keep;
            self.tail.drain(..excess);
            self.dropped += excess as u64;
        }
    }

    /// Everything kept, with a marker where bytes were dropped.
    pub fn into_bytes(mut self) -> Vec<u8> {
        if let Some(cap) = self.cap {
            let keep = cap - cap / 2;
            if self.tail.len() > keep {
                let excess = self.tail.len() - keep;
                self.tail.drain(..excess);
                self.dropped += excess as u64;
            }
        }
        if self.dropped > 0 {
            self.head.extend_from_slice(
                format!(
                    "\n{TRUNCATED} {} bytes of this stream here …]\n",
                    self.dropped
                )
                .as_bytes(),
            );
        }
        self.head.extend_from_slice(&self.tail);
        self.head
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Outcome;

    #[test]
    fn a_long_text_keeps_its_start_and_end_and_says_what_was_cut() {
        let text = format!("first {} last", "é".repeat(1000));
        let cut = truncate_middle(&text, 100);
        assert!(cut.starts_with("first "));
        assert!(cut.ends_with(" last"));
        assert!(cut.contains(TRUNCATED));
        assert!(cut.len() < 200);
        assert!(matches!(truncate_middle("short", 100), Cow::Borrowed(_)));
    }

    #[test]
    fn the_run_budget_shrinks_later_failures() {
        let limits = OutputLimits {
            per_test: 10_000,
            per_run: 12_000,
            per_stream: 1,
            keep_runs: 0,
            artifacts: 0,
        };
        let mut tests: Vec<TestResult> = (0..3)
            .map(|i| {
                let mut t = TestResult::new(format!("t{i}"), Outcome::Failed);
                t.longrepr = Some("x".repeat(50_000));
                t
            })
            .collect();
        cap_failures(&mut tests, &limits);
        let lens: Vec<usize> = tests
            .iter()
            .map(|t| t.longrepr.as_ref().unwrap().len())
            .collect();
        assert!(lens[0] < 10_100, "{lens:?}");
        assert!(lens[2] < AFTER_BUDGET + 100, "{lens:?}");
    }

    #[test]
    fn a_stream_keeps_its_first_and_last_bytes() {
        let mut buf = HeadTail::new(Some(10));
        for chunk in [&b"abcdefgh"[..], b"ijklmnop", b"qrstuvwxyz"] {
            buf.push(chunk);
        }
        let out = String::from_utf8(buf.into_bytes()).unwrap();
        assert!(out.starts_with("abcde\n"), "{out}");
        assert!(out.ends_with("\nvwxyz"), "{out}");
        assert!(out.contains("truncated 16 bytes"), "{out}");
        let mut all = HeadTail::new(None);
        all.push(b"abc");
        assert_eq!(all.into_bytes(), b"abc");
    }
}
