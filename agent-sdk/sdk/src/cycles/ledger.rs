//! What the cycle knows about each test: the outcome of its latest run and a signature of its
//! failure, so affected-only runs update the picture a full run drew.

use std::collections::{BTreeMap, BTreeSet};

/// A test's outcome, as far as the cycle cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Ran and passed.
    Pass,
    /// Failed or errored.
    Fail,
    /// Skipped: counts neither way.
    Skip,
}

/// One test in one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observed {
    /// The test id (the report's nodeid).
    pub id: String,
    /// Its outcome.
    pub verdict: Verdict,
    /// For failures: a normalised form of the assertion (see [`signature`]); two failures with
    /// the same signature failed "the same way".
    pub signature: String,
}

impl Observed {
    /// A test and its outcome, with its failure text reduced to a [`signature`].
    pub fn new(id: impl Into<String>, verdict: Verdict, failure_text: &str) -> Observed {
        Observed {
            id: id.into(),
            verdict,
            signature: signature(failure_text),
        }
    }
}

/// The latest known state of every test.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ledger {
    tests: BTreeMap<String, (Verdict, String)>,
}

impl Ledger {
    /// Replaces everything with a full run's results.
    pub fn replace(&mut self, tests: &[Observed]) {
        self.tests.clear();
        self.update(tests);
    }

    /// Updates the tests a partial run covered; the others keep their last known state.
    pub fn update(&mut self, tests: &[Observed]) {
        for t in tests {
            self.tests
                .insert(t.id.clone(), (t.verdict, t.signature.clone()));
        }
    }

    /// Marks a test as passing (a flaky test whose re-run passed).
    pub fn mark_passed(&mut self, id: &str) {
        if let Some(entry) = self.tests.get_mut(id) {
            *entry = (Verdict::Pass, String::new());
        }
    }

    /// Failing tests, in id order.
    pub fn failing(&self) -> BTreeSet<String> {
        self.tests
            .iter()
            .filter(|(_, (v, _))| *v == Verdict::Fail)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// The failure signature of a failing test.
    pub fn signature(&self, id: &str) -> Option<&str> {
        match self.tests.get(id) {
            Some((Verdict::Fail, s)) => Some(s),
            _ => None,
        }
    }

    /// Tests known, skipped ones included.
    pub fn len(&self) -> usize {
        self.tests.len()
    }

    /// Whether no test is known.
    pub fn is_empty(&self) -> bool {
        self.tests.is_empty()
    }

    /// Passed over ran (skipped excluded), 0–100; 0 when nothing ran.
    pub fn pass_rate(&self) -> f64 {
        pass_rate(self.tests.values().map(|(v, _)| *v))
    }
}

/// Passed over ran (skipped excluded), 0–100; 0 when nothing ran.
pub fn pass_rate(verdicts: impl IntoIterator<Item = Verdict>) -> f64 {
    let (mut passed, mut ran) = (0usize, 0usize);
    for v in verdicts {
        match v {
            Verdict::Pass => {
                passed += 1;
                ran += 1;
            }
            Verdict::Fail => ran += 1,
            Verdict::Skip => {}
        }
    }
    if ran == 0 {
        0.0
    } else {
        passed as f64 * 100.0 / ran as f64
    }
}

/// The part of a failure text that says *how* the test failed, with what varies between runs
/// (durations, addresses, line numbers of tracebacks) taken out: the first line that names an
/// assertion or an error, else the last non-empty line.
pub fn signature(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let pick = lines
        .iter()
        .find(|l| {
            let lower = l.to_ascii_lowercase();
            lower.starts_with("e ")
                || lower.contains("assert")
                || lower.contains("expected")
                || lower.contains("error")
                || lower.contains("panicked")
        })
        .or(lines.last())
        .copied()
        .unwrap_or("");
    normalise(pick)
}

/// Digits runs become `#`, whitespace collapses: `took 0.31s at 0x7f3a` → `took #.#s at #x#a`.
fn normalise(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_digits = false;
    let mut in_space = false;
    for c in line.chars().take(300) {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
            in_space = false;
        } else if c.is_whitespace() {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
            in_digits = false;
        } else {
            out.push(c);
            in_digits = false;
            in_space = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_ignore_numbers_and_pick_the_assertion() {
        let a = "Traceback line 12\nE   assert 'HI?' == 'HI!'\n  took 0.2s";
        let b = "Traceback line 40\nE   assert 'HI?' == 'HI!'\n  took 0.9s";
        assert_eq!(signature(a), signature(b));
        assert_ne!(signature(a), signature("E   assert 'hi' == 'HI!'"));
    }

    #[test]
    fn partial_runs_update_only_what_they_ran() {
        let mut l = Ledger::default();
        l.replace(&[
            Observed::new("a", Verdict::Fail, "x"),
            Observed::new("b", Verdict::Pass, ""),
        ]);
        assert_eq!(l.pass_rate(), 50.0);
        l.update(&[Observed::new("a", Verdict::Pass, "")]);
        assert_eq!(l.pass_rate(), 100.0);
        assert_eq!(l.len(), 2);
    }
}
