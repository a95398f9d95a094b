//! The runner-agnostic report: one per run, in the shape of pytest-json-report, whatever
//! framework produced it. Workers post it on; `report.json` in the run directory holds it.

use crate::framework::Framework;
use serde::{Deserialize, Serialize};

/// The outcome of one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The test ran and passed.
    Passed,
    /// The test ran and an assertion failed or it threw.
    Failed,
    /// The test could not run: a collection or import error, a suite that failed to load, a
    /// build failure, a setup error, a crash or a timeout.
    Error,
    /// The test was skipped, ignored, pending or marked todo.
    Skipped,
}

impl Outcome {
    /// Whether this outcome makes the run fail.
    pub fn is_failure(self) -> bool {
        matches!(self, Outcome::Failed | Outcome::Error)
    }
}

/// One test (or one thing that stopped tests from running) in a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    /// A stable id: `path::name` (pytest's own node id for pytest; `file::describe::title` for
    /// jest and vitest, `file::describe titles::title` for mocha, whose report joins describe
    /// titles with spaces; `import/path::TestName/sub` for go; `src/path.rs::mod::test` for
    /// cargo, `doc-tests/crate::src/lib.rs - item (line N)` for its doc tests). A file or package that could not load is named alone. Synthetic entries start
    /// with `[`: `[TIMEOUT]`, `[runner]` (a failing exit no test explains), `[build]`,
    /// `[crash]`.
    pub nodeid: String,
    /// What happened.
    pub outcome: Outcome,
    /// Seconds the test took, when the runner says.
    pub duration: f64,
    /// The test's file relative to the project root, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The 1-based line of the test in `file`, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lineno: Option<u32>,
    /// The failure text (assertion, traceback, compiler error), for failures and errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub longrepr: Option<String>,
}

impl TestResult {
    /// A result with only an id and an outcome.
    pub fn new(nodeid: impl Into<String>, outcome: Outcome) -> Self {
        TestResult {
            nodeid: nodeid.into(),
            outcome,
            duration: 0.0,
            file: None,
            lineno: None,
            longrepr: None,
        }
    }

    /// Whether this entry was made by huddle (timeout, crash) rather than by a test.
    pub fn is_synthetic(&self) -> bool {
        self.nodeid.starts_with('[')
    }
}

/// Makes ids unique in order: the second and later entries with an id already seen get
/// ` [2]`, ` [3]`… (`test.each` cases whose title does not tell them apart, one file run by
/// two jest projects), so one id never stands for a pass and a failure at once. A re-run by
/// id matches the title with or without the suffix (see `exact_names_pattern`).
pub fn disambiguate_ids<'a>(ids: impl Iterator<Item = &'a mut String>) {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for id in ids {
        let n = seen.entry(id.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            id.push_str(&format!(" [{n}]"));
        }
    }
}

/// Counts by outcome; `total` is their sum.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Tests that passed.
    pub passed: usize,
    /// Tests that failed.
    pub failed: usize,
    /// Errors: tests or whole files that could not run.
    pub error: usize,
    /// Tests skipped.
    pub skipped: usize,
    /// All of the above.
    pub total: usize,
}

impl Summary {
    /// Counts the outcomes of `tests`.
    pub fn of(tests: &[TestResult]) -> Summary {
        let mut s = Summary::default();
        for t in tests {
            match t.outcome {
                Outcome::Passed => s.passed += 1,
                Outcome::Failed => s.failed += 1,
                Outcome::Error => s.error += 1,
                Outcome::Skipped => s.skipped += 1,
            }
        }
        s.total = tests.len();
        s
    }
}

/// Line coverage measured during the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    /// Covered lines (statements, for go and coverage.py) as a percentage, 0–100.
    pub line_percent: f64,
    /// The file it was read from, relative to the run directory.
    pub source: String,
}

/// One run of one framework.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Unix time (seconds) when the run started.
    pub created: f64,
    /// Wall-clock seconds the runner took.
    pub duration: f64,
    /// The runner's exit code; 124 when huddle killed it at the timeout.
    pub exitcode: i32,
    /// The project directory the tests ran in.
    pub root: String,
    /// The framework that ran.
    pub framework: Framework,
    /// Counts by outcome.
    pub summary: Summary,
    /// Every test, in the runner's order, then synthetic entries.
    pub tests: Vec<TestResult>,
    /// True when the run hit the timeout and its process group was killed.
    #[serde(default)]
    pub timed_out: bool,
    /// The command that ran, as argv.
    #[serde(default)]
    pub command: Vec<String>,
    /// Line coverage, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Coverage>,
    /// Screenshots, traces, videos and the runner's raw report, kept in the run directory
    /// (paths relative to it), within the run's cap.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<crate::artifacts::Artifact>,
    /// Tests that failed and then passed within this run (Maestro flows passing on huddle's
    /// retry, Cypress tests passing on one of their own `retries`): counted as passed,
    /// listed here by id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flaky: Vec<String>,
    /// How many tests are in `flaky` (the seeds' `flakyInRun`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flaky_in_run: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Report {
    /// True when at least one test ran, none failed or errored, and the run did not time out.
    pub fn all_passed(&self) -> bool {
        !self.timed_out
            && self.summary.failed == 0
            && self.summary.error == 0
            && self.summary.total > 0
    }

    /// Failed and errored tests, in report order.
    pub fn failures(&self) -> impl Iterator<Item = &TestResult> {
        self.tests.iter().filter(|t| t.outcome.is_failure())
    }

    /// Passed tests over tests that ran to a verdict (skipped ones excluded), 0–100.
    pub fn pass_rate(&self) -> f64 {
        let ran = self.summary.total - self.summary.skipped;
        if ran == 0 {
            return 0.0;
        }
        self.summary.passed as f64 * 100.0 / ran as f64
    }
}
