//! Test history rules shared by every backend: what a valid run is, its counts, and the answers
//! computed from a project's kept runs (trend, flaky tests, regressions). Backends only store
//! and load runs; the analysis runs here over at most `[history] runs_per_project` runs.

use super::error::{StoreError, StoreResult};
use super::rules::fmt_time;
use crate::config::{HistorySettings, LimitSettings};
use huddle_wire::{
    flaky_score, pass_rate, FlakyTest, FlakyTests, NewTestRun, Regression, Regressions,
    TestHistory, TestOutcome, TestRunArtifacts, TestRunRef, TestRunSummary, MAX_RUN_ARTIFACTS,
};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Longest project name and tree hash, in characters.
pub const MAX_PROJECT_CHARS: usize = 200;
pub const MAX_TREE_CHARS: usize = 200;

/// A kept run: its summary and, when loaded, its outcomes.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRun {
    pub summary: TestRunSummary,
    pub outcomes: Vec<(String, TestOutcome)>,
}

/// The bounds a backend needs to take a run.
#[derive(Debug, Clone)]
pub struct HistoryLimits {
    pub max_outcomes: usize,
    pub max_nodeid_chars: usize,
    pub runs_per_project: usize,
    pub max_projects: usize,
}

impl HistoryLimits {
    pub fn new(limits: &LimitSettings, history: &HistorySettings) -> Self {
        HistoryLimits {
            max_outcomes: limits.max_test_outcomes,
            max_nodeid_chars: limits.max_nodeid_chars,
            runs_per_project: history.runs_per_project.max(1),
            max_projects: history.max_projects.max(1),
        }
    }
}

/// A checked run, ready to store: its start time in milliseconds and its counts.
#[derive(Debug, Clone)]
pub struct CheckedRun {
    pub started_ms: Option<i64>,
    pub counts: Counts,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
    pub errors: u64,
}

/// Outcomes as stored: a small integer each.
pub fn outcome_code(o: TestOutcome) -> i64 {
    match o {
        TestOutcome::Passed => 0,
        TestOutcome::Failed => 1,
        TestOutcome::Skipped => 2,
        TestOutcome::Error => 3,
    }
}

pub fn outcome_from_code(code: i64) -> TestOutcome {
    match code {
        0 => TestOutcome::Passed,
        1 => TestOutcome::Failed,
        2 => TestOutcome::Skipped,
        _ => TestOutcome::Error,
    }
}

fn check_text(field: &str, value: &str, max: usize) -> StoreResult<()> {
    if value.trim().is_empty() {
        return Err(StoreError::invalid(field, format!("{field} is empty")));
    }
    let chars = value.chars().count();
    if chars > max {
        return Err(StoreError::invalid(
            field,
            format!("{field} has {chars} characters; at most {max} are allowed"),
        ));
    }
    if value.chars().any(char::is_control) {
        return Err(StoreError::invalid(
            field,
            format!("{field} contains a control character"),
        ));
    }
    Ok(())
}

/// The tiers a run may name. Each keeps its own newest `runs_per_project` runs, so the names
/// are fixed: a free-form tier would let a client keep any number of runs per project.
pub const TIERS: [&str; 4] = ["unit", "pbt", "integration", "e2e"];

/// Longest artifact path and run directory, in characters.
pub const MAX_ARTIFACT_PATH_CHARS: usize = 1_000;
const ARTIFACT_KINDS: [&str; 4] = ["screenshot", "trace", "video", "raw_report"];

fn check_artifacts(a: &TestRunArtifacts) -> StoreResult<()> {
    check_text("artifacts.runDir", &a.run_dir, MAX_ARTIFACT_PATH_CHARS)?;
    if a.files.len() > MAX_RUN_ARTIFACTS {
        return Err(StoreError::invalid(
            "artifacts.files",
            format!(
                "artifacts.files lists {}; at most {MAX_RUN_ARTIFACTS}",
                a.files.len()
            ),
        ));
    }
    for (i, f) in a.files.iter().enumerate() {
        check_text(
            &format!("artifacts.files[{i}].path"),
            &f.path,
            MAX_ARTIFACT_PATH_CHARS,
        )?;
        if !ARTIFACT_KINDS.contains(&f.kind.as_str()) {
            return Err(StoreError::invalid(
                &format!("artifacts.files[{i}].kind"),
                format!("an artifact's kind is one of {}", ARTIFACT_KINDS.join(", ")),
            ));
        }
    }
    Ok(())
}

/// A stored run's artifacts column (JSON text), as the run summary shows it.
pub fn artifacts_from_text(text: Option<String>) -> StoreResult<Option<TestRunArtifacts>> {
    text.map(|t| {
        serde_json::from_str(&t).map_err(|e| StoreError::Internal(format!("run artifacts: {e}")))
    })
    .transpose()
}

/// A run's artifacts as stored.
pub fn artifacts_to_text(a: &Option<TestRunArtifacts>) -> Option<String> {
    a.as_ref()
        .map(|a| serde_json::to_string(a).unwrap_or_default())
}

/// Checks a run against the limits: names, sizes, each node id once.
pub fn check_run(run: &NewTestRun, limits: &HistoryLimits) -> StoreResult<CheckedRun> {
    check_text("project", &run.project, MAX_PROJECT_CHARS)?;
    check_text("tree", &run.tree, MAX_TREE_CHARS)?;
    if let Some(tier) = &run.tier {
        if !TIERS.contains(&tier.as_str()) {
            return Err(StoreError::invalid(
                "tier",
                format!("tier must be one of {}", TIERS.join(", ")),
            ));
        }
    }
    if let Some(task) = &run.task {
        super::rules::validate::task_id("task", task)?;
    }
    if let Some(a) = &run.artifacts {
        check_artifacts(a)?;
    }
    let started_ms = match &run.started_at {
        None => None,
        Some(t) => Some(
            chrono::DateTime::parse_from_rfc3339(t)
                .map_err(|e| {
                    StoreError::invalid(
                        "startedAt",
                        format!("startedAt {t:?} is not an RFC 3339 time: {e}"),
                    )
                })?
                .timestamp_millis(),
        ),
    };
    if run.outcomes.len() > limits.max_outcomes {
        return Err(StoreError::invalid(
            "outcomes",
            format!(
                "the run has {} outcomes; at most {} are allowed (the [limits] max_test_outcomes setting)",
                run.outcomes.len(),
                limits.max_outcomes
            ),
        ));
    }
    let mut seen = HashSet::with_capacity(run.outcomes.len());
    let mut counts = Counts::default();
    for (i, o) in run.outcomes.iter().enumerate() {
        check_text(
            &format!("outcomes[{i}].nodeid"),
            &o.nodeid,
            limits.max_nodeid_chars,
        )?;
        if !seen.insert(o.nodeid.as_str()) {
            return Err(StoreError::invalid(
                &format!("outcomes[{i}].nodeid"),
                format!("{} appears twice in the run", o.nodeid),
            ));
        }
        match o.outcome {
            TestOutcome::Passed => counts.passed += 1,
            TestOutcome::Failed => counts.failed += 1,
            TestOutcome::Skipped => counts.skipped += 1,
            TestOutcome::Error => counts.errors += 1,
        }
    }
    Ok(CheckedRun { started_ms, counts })
}

/// How many projects team `$1` has when project `$2` would be a new one, else 0: the count
/// [`check_project_count`] needs, one query on both backends.
pub const PROJECTS_IF_NEW: &str = "select case
         when exists (select 1 from test_runs where team_id = $1 and project = $2) then 0
         else (select count(distinct project) from test_runs where team_id = $1) end";

/// Refuses a run for one project more than `[history] max_projects`.
pub fn check_project_count(projects_if_new: i64, limits: &HistoryLimits) -> StoreResult<()> {
    let max = limits.max_projects;
    if projects_if_new as usize >= max {
        return Err(StoreError::invalid(
            "project",
            format!(
                "the team already has a test history for {max} projects (the [history] max_projects setting); post to one of them"
            ),
        ));
    }
    Ok(())
}

/// A summary from stored columns.
pub fn summary(
    id: i64,
    project: String,
    tree: String,
    agent: String,
    started_ms: i64,
    counts: Counts,
) -> TestRunSummary {
    TestRunSummary {
        id,
        project,
        tree,
        agent,
        started_at: fmt_time(started_ms),
        passed: counts.passed,
        failed: counts.failed,
        skipped: counts.skipped,
        errors: counts.errors,
        pass_rate: pass_rate(counts.passed, counts.failed, counts.errors),
        tier: None,
        task: None,
        artifacts: None,
    }
}

/// `GET …/history`: the runs (oldest first) and how the pass rate moved across them.
pub fn history(
    project: Option<String>,
    projects: Vec<String>,
    runs: Vec<StoredRun>,
) -> TestHistory {
    let runs: Vec<TestRunSummary> = runs.into_iter().map(|r| r.summary).collect();
    let pass_rate_change = match (runs.first(), runs.last()) {
        (Some(first), Some(last)) if runs.len() > 1 => Some(last.pass_rate - first.pass_rate),
        _ => None,
    };
    TestHistory {
        project,
        projects,
        runs,
        pass_rate_change,
    }
}

/// Per test and tree: passes and failures.
fn tallies<'a>(
    runs: impl IntoIterator<Item = &'a StoredRun>,
) -> HashMap<(&'a str, &'a str), (u64, u64)> {
    let mut t: HashMap<(&str, &str), (u64, u64)> = HashMap::new();
    for run in runs {
        for (nodeid, outcome) in &run.outcomes {
            let e = t
                .entry((nodeid.as_str(), run.summary.tree.as_str()))
                .or_default();
            if *outcome == TestOutcome::Passed {
                e.0 += 1;
            } else if outcome.is_failure() {
                e.1 += 1;
            }
        }
    }
    t
}

/// Tests that passed and failed on the same tree (only on `tree` when given), most flaky first.
pub fn flaky(project: Option<String>, tree: Option<String>, runs: &[StoredRun]) -> FlakyTests {
    let considered: Vec<&StoredRun> = runs
        .iter()
        .filter(|r| tree.as_ref().is_none_or(|t| &r.summary.tree == t))
        .collect();
    let mut per_test: BTreeMap<&str, (u64, u64, u64)> = BTreeMap::new();
    for ((nodeid, _), (passes, failures)) in tallies(considered.iter().copied()) {
        if passes > 0 && failures > 0 {
            let e = per_test.entry(nodeid).or_default();
            e.0 += passes;
            e.1 += failures;
            e.2 += 1;
        }
    }
    let mut tests: Vec<FlakyTest> = per_test
        .into_iter()
        .map(|(nodeid, (passes, failures, trees))| FlakyTest {
            nodeid: nodeid.to_string(),
            passes,
            failures,
            trees,
            score: flaky_score(passes, failures),
        })
        .collect();
    tests.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(b.failures.cmp(&a.failures))
            .then(a.nodeid.cmp(&b.nodeid))
    });
    FlakyTests {
        project,
        tree,
        runs: considered.len() as u64,
        tests,
        omitted: 0,
    }
}

fn run_ref(run: &StoredRun) -> TestRunRef {
    TestRunRef {
        id: run.summary.id,
        tree: run.summary.tree.clone(),
        started_at: run.summary.started_at.clone(),
    }
}

/// Tests failing in the latest run whose last earlier outcome (skips aside) was a pass.
pub fn regressions(project: Option<String>, runs: &[StoredRun]) -> Regressions {
    let Some((latest, earlier)) = runs.split_last() else {
        return Regressions {
            project,
            tests: vec![],
            omitted: 0,
        };
    };
    let flaky_tests: HashSet<&str> = tallies(runs)
        .into_iter()
        .filter(|(_, (p, f))| *p > 0 && *f > 0)
        .map(|((nodeid, _), _)| nodeid)
        .collect();
    let failing: HashMap<&str, TestOutcome> = latest
        .outcomes
        .iter()
        .filter(|(_, o)| o.is_failure())
        .map(|(n, o)| (n.as_str(), *o))
        .collect();
    // Each failing test's last outcome before the latest run, skips aside: one pass backwards.
    let mut before: HashMap<&str, (&StoredRun, TestOutcome)> = HashMap::new();
    for run in earlier.iter().rev() {
        if before.len() == failing.len() {
            break;
        }
        for (nodeid, outcome) in &run.outcomes {
            if *outcome != TestOutcome::Skipped && failing.contains_key(nodeid.as_str()) {
                before.entry(nodeid.as_str()).or_insert((run, *outcome));
            }
        }
    }
    let mut tests: Vec<Regression> = before
        .into_iter()
        .filter(|(_, (_, o))| *o == TestOutcome::Passed)
        .map(|(nodeid, (run, _))| Regression {
            nodeid: nodeid.to_string(),
            outcome: failing[nodeid],
            failing_run: run_ref(latest),
            last_passing_run: run_ref(run),
            flaky: flaky_tests.contains(nodeid),
        })
        .collect();
    tests.sort_by(|a, b| a.nodeid.cmp(&b.nodeid));
    Regressions {
        project,
        tests,
        omitted: 0,
    }
}

/// Cuts `tests` where the answer would pass `max_bytes` of JSON; how many were cut.
pub fn cut_to_bytes<T: serde::Serialize>(tests: &mut Vec<T>, max_bytes: usize) -> u64 {
    let mut budget = super::rules::PageBudget::new(Some(max_bytes));
    let keep = tests.iter().take_while(|t| budget.fits(t)).count();
    let omitted = (tests.len() - keep) as u64;
    tests.truncate(keep);
    omitted
}
