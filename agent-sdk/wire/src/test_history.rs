//! Test history: each run's per-test outcomes as workers post them
//! (`POST /v1/teams/{team}/history/runs`) and what the daemon answers from the last runs of a
//! project: the runs with their pass rates (the trend), flaky tests and regressions.

use serde::{Deserialize, Serialize};

/// How one test ended in one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum TestOutcome {
    Passed,
    Failed,
    Skipped,
    Error,
}

impl TestOutcome {
    pub const ALL: [TestOutcome; 4] = [
        TestOutcome::Passed,
        TestOutcome::Failed,
        TestOutcome::Skipped,
        TestOutcome::Error,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TestOutcome::Passed => "passed",
            TestOutcome::Failed => "failed",
            TestOutcome::Skipped => "skipped",
            TestOutcome::Error => "error",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        TestOutcome::ALL.into_iter().find(|o| o.as_str() == s)
    }

    /// `failed` and `error` both count against a test (a broken fixture is a failure too).
    pub fn is_failure(self) -> bool {
        matches!(self, TestOutcome::Failed | TestOutcome::Error)
    }
}

/// One test's outcome in a run: compact, the node id and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TestResultRecord {
    /// The runner's id of the test (`tests/test_x.py::test_y`).
    pub nodeid: String,
    /// `passed`, `failed`, `skipped` or `error`.
    pub outcome: TestOutcome,
}

/// `POST …/history/runs`: one run of a project's test suite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewTestRun {
    /// Which suite: a name the workers agree on (the project directory's name by default).
    pub project: String,
    /// The code the suite ran against: a git tree or commit hash, or a content hash the worker
    /// computes. Two runs on the same tree that disagree about a test make it flaky.
    pub tree: String,
    /// When the run started (RFC 3339); the time the daemon stored it when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// Every test of the run, each node id once.
    pub outcomes: Vec<TestResultRecord>,
    /// The test tier the run covered (`unit`, `pbt`, `integration`, `e2e`), when the worker
    /// ran tiers; absent for a whole-suite run. `?tier=` reads one tier's runs; each tier keeps
    /// its own newest `[history] runs_per_project` runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(pattern = "^(unit|pbt|integration|e2e)$"))]
    pub tier: Option<String>,
    /// The task this run verifies, when a worker ran it for one: a task that requires
    /// evidence completes only with a run of its own (`result.evidence.runId`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// The files the run kept beside its report (screenshots, traces, videos, the runner's raw
    /// report), on the worker's machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<TestRunArtifacts>,
}

/// Where a run's kept files are and what each is (at most [`MAX_RUN_ARTIFACTS`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TestRunArtifacts {
    /// The run's directory on the worker's machine (its `report.json` is there).
    pub run_dir: String,
    /// Each kept file (at most 500).
    pub files: Vec<TestRunArtifact>,
}

/// One kept file of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TestRunArtifact {
    /// Relative to the run's directory.
    pub path: String,
    /// `screenshot`, `trace`, `video` or `raw_report`.
    pub kind: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Removed to keep the run under the worker's cap: listed, no longer on disk.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub removed: bool,
}

/// Files one run may list.
pub const MAX_RUN_ARTIFACTS: usize = 500;

/// A stored run, without its outcomes: counts and pass rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TestRunSummary {
    /// Increasing in the order runs were stored.
    pub id: i64,
    pub project: String,
    pub tree: String,
    /// The agent that posted the run.
    pub agent: String,
    /// RFC 3339.
    pub started_at: String,
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
    pub errors: u64,
    /// Passed over tests that ran to a verdict (skips excluded), 0–100; 0 when none did.
    pub pass_rate: f64,
    /// The test tier the run covered, when it was one tier's run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<String>,
    /// The task the run verifies, when it was posted for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// The files the run kept, when the worker listed them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<TestRunArtifacts>,
}

/// `GET …/history`: a project's kept runs, oldest first, so their pass rates read as the trend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TestHistory {
    /// The project answered for: the one asked, or the last one posted to; `None` when the
    /// team has no runs.
    pub project: Option<String>,
    /// Every project of the team with kept runs, by name.
    pub projects: Vec<String>,
    /// Oldest first.
    pub runs: Vec<TestRunSummary>,
    /// The last run's pass rate minus the first kept run's (`None` with fewer than two runs).
    pub pass_rate_change: Option<f64>,
}

/// A test that passed and failed on the same tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FlakyTest {
    pub nodeid: String,
    /// Passes on the trees where the test both passed and failed.
    pub passes: u64,
    /// Failures (`failed` or `error`) on those trees.
    pub failures: u64,
    /// How many trees saw it both pass and fail.
    pub trees: u64,
    /// `2 × min(passes, failures) / (passes + failures)`: 1 for a coin toss, near 0 for a test
    /// that almost always gives the same answer.
    pub score: f64,
}

/// `GET …/history/flaky`: most flaky first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FlakyTests {
    pub project: Option<String>,
    /// The tree asked about (`?tree=`), if any: then only runs on it count.
    pub tree: Option<String>,
    /// How many kept runs were looked at.
    pub runs: u64,
    pub tests: Vec<FlakyTest>,
    /// Flaky tests left off the end of `tests` because the answer reached the daemon's
    /// `[limits] max_page_bytes` (the most flaky are kept).
    #[serde(default)]
    pub omitted: u64,
}

/// A run, named briefly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TestRunRef {
    pub id: i64,
    pub tree: String,
    pub started_at: String,
}

/// A test that fails in the latest run and passed the last time it ran before.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Regression {
    pub nodeid: String,
    /// `failed` or `error`.
    pub outcome: TestOutcome,
    /// The latest run, where it fails.
    pub failing_run: TestRunRef,
    /// The last earlier run where it passed.
    pub last_passing_run: TestRunRef,
    /// Whether it is also flaky (passed and failed on one tree): maybe not a real regression.
    pub flaky: bool,
}

/// `GET …/history/regressions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Regressions {
    pub project: Option<String>,
    pub tests: Vec<Regression>,
    /// Regressions left off the end of `tests` (by node id) because the answer reached the
    /// daemon's `[limits] max_page_bytes`.
    #[serde(default)]
    pub omitted: u64,
}

/// Passed over tests that ran to a verdict, 0–100 (as the runners' reports count it).
pub fn pass_rate(passed: u64, failed: u64, errors: u64) -> f64 {
    let ran = passed + failed + errors;
    if ran == 0 {
        return 0.0;
    }
    passed as f64 * 100.0 / ran as f64
}

/// `flaky_score(3, 2)`: how evenly a test splits between passes and failures, 0 to 1.
pub fn flaky_score(passes: u64, failures: u64) -> f64 {
    let total = passes + failures;
    if total == 0 {
        return 0.0;
    }
    2.0 * passes.min(failures) as f64 / total as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_refuse_unknown_fields_and_outcomes_round_trip() {
        let run: NewTestRun = serde_json::from_value(serde_json::json!({
            "project": "calc", "tree": "abc",
            "outcomes": [{"nodeid": "t.py::a", "outcome": "passed"}, {"nodeid": "t.py::b", "outcome": "error"}]
        }))
        .unwrap();
        assert_eq!(run.outcomes[1].outcome, TestOutcome::Error);
        assert!(serde_json::from_value::<NewTestRun>(
            serde_json::json!({"project": "p", "tree": "t", "outcomes": [], "extra": 1})
        )
        .is_err());
        for o in TestOutcome::ALL {
            assert_eq!(TestOutcome::parse(o.as_str()), Some(o));
        }
    }

    #[test]
    fn the_score_is_one_for_a_coin_toss() {
        assert_eq!(flaky_score(2, 2), 1.0);
        assert_eq!(flaky_score(0, 4), 0.0);
        assert!((flaky_score(3, 1) - 0.5).abs() < 1e-9);
    }
}
