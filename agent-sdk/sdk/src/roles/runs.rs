//! Running the project's tests for a cycle: full and affected runs, flaky re-checks, and what
//! the latest run said about each test (its failure text and file, for prompts and reports).
//! Every full run is checked against the first one ([`Baseline`]): a test that failed and is no
//! longer reported enters the report as failed, so no verdict comes from a shrunken suite.

use super::tree_watch::TreeState;
use super::RoleError;
use crate::cycles::baseline::{Baseline, Gone};
use crate::cycles::{Observed, Scope, Verdict};
use crate::runners::affected::{plan, AffectedPlan};
use crate::runners::{
    run_tests, Framework, Outcome, Report, RunOptions, Selection, Summary, TestResult,
};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One task's test runs in one project.
pub(crate) struct Runs {
    pub project: PathBuf,
    pub framework: Framework,
    timeout: Duration,
    /// What a full run runs (the executor's layer may name paths).
    full: Selection,
    /// Measure coverage on full runs (dropped when the framework cannot).
    pub coverage: bool,
    /// The latest result of every test seen.
    pub latest: BTreeMap<String, TestResult>,
    /// Files changed since the last full run.
    pub edited: BTreeSet<String>,
    /// The last full run's report (counts, coverage).
    pub last_full: Option<Report>,
    /// The last full run's directory (its report.json and artifacts); none when tiered.
    pub last_full_dir: Option<PathBuf>,
    /// The latest run's directory.
    last_dir: Option<PathBuf>,
    /// Runs made (the first one's crashes and timeouts are errors, later ones failures).
    pub runs: u32,
    /// The first full run's tests and every failure since.
    baseline: Baseline,
    /// Tests the last full run counted as failed because they were no longer reported.
    pub vanished: Vec<String>,
    /// Tiered mode: every run is the tiers pipeline ([`super::tiered`]).
    pub tiered: Option<super::tiered::Tiered>,
    /// The first full run's outcomes: what the verdict re-run is held to ([`super::verify`]).
    pub first_full: Vec<Observed>,
}

impl Runs {
    pub fn new(
        project: &Path,
        framework: Framework,
        timeout: Duration,
        full: Selection,
        coverage: bool,
    ) -> Runs {
        Runs {
            project: project.to_path_buf(),
            framework,
            timeout,
            full,
            coverage,
            latest: BTreeMap::new(),
            edited: BTreeSet::new(),
            last_full: None,
            last_full_dir: None,
            last_dir: None,
            runs: 0,
            baseline: Baseline::default(),
            vanished: Vec::new(),
            tiered: None,
            first_full: Vec::new(),
        }
    }

    /// Runs `scope` and returns the scope actually run (an affected run that had to run
    /// everything is a full run) with its results.
    pub async fn run(&mut self, scope: Scope) -> Result<(Scope, Vec<Observed>), RoleError> {
        let started = std::time::SystemTime::now();
        let (scope, selection) = match scope {
            Scope::Full => (Scope::Full, self.full.clone()),
            Scope::Affected => self.affected_selection(),
        };
        let tree = (scope == Scope::Full).then(|| TreeState::capture(&self.project));
        let mut report = self.execute(selection, scope == Scope::Full).await?;
        if let Some(before) = tree {
            let mut written = before.written_since(&TreeState::capture(&self.project));
            if !written.is_empty() {
                written.truncate(20);
                return Err(RoleError::TreeWritten {
                    tool: self.framework.name().to_string(),
                    files: written,
                });
            }
        }
        if scope == Scope::Full {
            let gone = self.baseline.check_full(&observed(&report));
            for (id, why) in &gone {
                tracing::warn!("{id} counts as failed: {}", why.explain());
            }
            self.vanished = gone.iter().map(|(id, _)| id.clone()).collect();
            count_as_failed(&mut report, &gone);
        }
        tracing::info!(
            "{} run: {} passed, {} failed, {} errors, {} skipped ({:.1}% pass rate)",
            if scope == Scope::Full {
                "full"
            } else {
                "affected"
            },
            report.summary.passed,
            report.summary.failed,
            report.summary.error,
            report.summary.skipped,
            report.pass_rate()
        );
        huddle_telemetry::record_in_attempt("test_run", started, run_attributes(&report, scope));
        if scope == Scope::Full {
            self.edited.clear();
            self.latest.clear();
            self.last_full = Some(report.clone());
            self.last_full_dir = self.last_dir.clone();
        }
        let seen = self.observe(&report);
        self.baseline.observe(&seen);
        if scope == Scope::Full && self.first_full.is_empty() {
            self.first_full = seen.clone();
        }
        Ok((scope, seen))
    }

    /// What a full run runs.
    pub fn full_selection(&self) -> &Selection {
        &self.full
    }

    /// Runs `tests` once more.
    pub async fn recheck(&mut self, tests: &[String]) -> Result<Vec<Observed>, RoleError> {
        tracing::info!(
            "re-running {} failing test(s) once to spot flaky ones",
            tests.len()
        );
        let report = self
            .execute(Selection::Tests(tests.to_vec()), false)
            .await?;
        let seen = self.observe(&report);
        self.baseline.observe(&seen);
        Ok(seen)
    }

    /// The failure text of `test` in its latest run.
    pub fn failure_text(&self, test: &str) -> String {
        self.latest
            .get(test)
            .and_then(|t| t.longrepr.clone())
            .unwrap_or_default()
    }

    /// The file `test` lives in, relative to the project.
    pub fn test_file(&self, test: &str) -> Option<String> {
        let from_result = self.latest.get(test).and_then(|t| t.file.clone());
        from_result.or_else(|| {
            let file = test.split("::").next()?;
            self.project.join(file).is_file().then(|| file.to_string())
        })
    }

    fn affected_selection(&self) -> (Scope, Selection) {
        let failing: Vec<String> = self
            .latest
            .values()
            .filter(|t| t.outcome.is_failure() && !t.is_synthetic())
            .map(|t| t.nodeid.clone())
            .collect();
        let mut changed: Vec<String> = self.edited.iter().cloned().collect();
        for id in &failing {
            if let Some(file) = self.test_file(id) {
                if !changed.contains(&file) {
                    changed.push(file);
                }
            }
        }
        match plan(&self.project, self.framework, &changed) {
            AffectedPlan::Subset { selection, .. } => (Scope::Affected, selection),
            AffectedPlan::Nothing { .. } if !failing.is_empty() => {
                (Scope::Affected, Selection::Tests(failing))
            }
            _ => (Scope::Full, self.full.clone()),
        }
    }

    async fn execute(&mut self, selection: Selection, full: bool) -> Result<Report, RoleError> {
        let mut opts = RunOptions {
            selection,
            timeout: self.timeout,
            coverage: full && self.coverage,
            ..RunOptions::default()
        };
        let first = self.runs == 0;
        self.runs += 1;
        if let Some(tiered) = &mut self.tiered {
            let report = tiered
                .run(&self.project, self.framework, self.timeout, &opts.selection)
                .await
                .map_err(|e| RoleError::Runner {
                    tool: self.framework.name().to_string(),
                    source: e,
                })?;
            return Ok(report);
        }
        let outcome = match run_tests(&self.project, self.framework, &opts).await {
            Err(e) if opts.coverage && !matches!(e, crate::runners::RunnerError::Guard(_)) => {
                tracing::info!("coverage unavailable ({e}); running without it");
                self.coverage = false;
                opts.coverage = false;
                run_tests(&self.project, self.framework, &opts).await
            }
            other => other,
        };
        let outcome = outcome.map_err(|e| RoleError::Runner {
            tool: self.framework.name().to_string(),
            source: e,
        })?;
        self.last_dir = Some(outcome.run_dir);
        let report = outcome.report;
        if first {
            if report.timed_out {
                return Err(RoleError::Timeout {
                    tool: self.framework.name().to_string(),
                    secs: self.timeout.as_secs(),
                });
            }
            if let Some(t) = report.tests.iter().find(|t| {
                t.nodeid == "[crash]" || (t.nodeid == "[runner]" && report.summary.total == 1)
            }) {
                return Err(RoleError::Crashed {
                    tool: self.framework.name().to_string(),
                    output: crate::runners::scrub::for_message(
                        t.longrepr.as_deref().unwrap_or(""),
                        20,
                    ),
                });
            }
        }
        Ok(report)
    }

    fn observe(&mut self, report: &Report) -> Vec<Observed> {
        for t in &report.tests {
            self.latest.insert(t.nodeid.clone(), t.clone());
        }
        observed(report)
    }
}

/// A report's tests as the cycles see them.
fn observed(report: &Report) -> Vec<Observed> {
    report
        .tests
        .iter()
        .map(|t| {
            let verdict = match t.outcome {
                Outcome::Passed => Verdict::Pass,
                Outcome::Skipped => Verdict::Skip,
                Outcome::Failed | Outcome::Error => Verdict::Fail,
            };
            Observed::new(
                t.nodeid.clone(),
                verdict,
                t.longrepr.as_deref().unwrap_or(""),
            )
        })
        .collect()
}

/// Puts the tests that vanished into the report as failed (a skipped one turns failed), with
/// why, and counts again.
fn count_as_failed(report: &mut Report, gone: &[(String, Gone)]) {
    if gone.is_empty() {
        return;
    }
    for (id, why) in gone {
        let text = format!("{id}: {}", why.explain());
        match report.tests.iter_mut().find(|t| &t.nodeid == id) {
            Some(t) => {
                t.outcome = Outcome::Failed;
                t.longrepr = Some(text);
            }
            None => {
                let mut t = TestResult::new(id.clone(), Outcome::Failed);
                t.file = id.split("::").next().map(str::to_string);
                t.longrepr = Some(text);
                report.tests.push(t);
            }
        }
    }
    report.summary = Summary::of(&report.tests);
}

/// A test run's span attributes: the framework, the scope and the counts.
fn run_attributes(report: &Report, scope: Scope) -> Vec<huddle_telemetry::KeyValue> {
    use huddle_telemetry::KeyValue;
    if !huddle_telemetry::enabled() {
        return Vec::new();
    }
    let s = &report.summary;
    vec![
        KeyValue::new("test.framework", report.framework.name()),
        KeyValue::new(
            "test.scope",
            if scope == Scope::Full {
                "full"
            } else {
                "affected"
            },
        ),
        KeyValue::new("test.passed", s.passed as i64),
        KeyValue::new("test.failed", s.failed as i64),
        KeyValue::new("test.errors", s.error as i64),
        KeyValue::new("test.skipped", s.skipped as i64),
        KeyValue::new("test.pass_rate", report.pass_rate()),
    ]
}
