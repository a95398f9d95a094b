//! Running the project's tests for a cycle: full and affected runs, flaky re-checks, and what
//! the latest run said about each test (its failure text and file, for prompts and reports).

use super::RoleError;
use crate::cycles::{Observed, Scope, Verdict};
use crate::runners::affected::{plan, AffectedPlan};
use crate::runners::{run_tests, Framework, Outcome, Report, RunOptions, Selection, TestResult};
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
    /// Runs made (the first one's crashes and timeouts are errors, later ones failures).
    pub runs: u32,
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
            runs: 0,
        }
    }

    /// Runs `scope` and returns the scope actually run (an affected run that had to run
    /// everything is a full run) with its results.
    pub async fn run(&mut self, scope: Scope) -> Result<(Scope, Vec<Observed>), RoleError> {
        let (scope, selection) = match scope {
            Scope::Full => (Scope::Full, self.full.clone()),
            Scope::Affected => self.affected_selection(),
        };
        let report = self.execute(selection, scope == Scope::Full).await?;
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
        if scope == Scope::Full {
            self.edited.clear();
            self.latest.clear();
            self.last_full = Some(report.clone());
        }
        Ok((scope, self.observe(&report)))
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
        Ok(self.observe(&report))
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
        let outcome = match run_tests(&self.project, self.framework, &opts).await {
            Err(e) if opts.coverage && !matches!(e, crate::runners::RunnerError::Guard(_)) => {
                tracing::info!("coverage unavailable ({e}); running without it");
                self.coverage = false;
                opts.coverage = false;
                run_tests(&self.project, self.framework, &opts).await
            }
            other => other,
        };
        let report = outcome
            .map_err(|e| RoleError::Runner {
                tool: self.framework.name().to_string(),
                source: e,
            })?
            .report;
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
        report
            .tests
            .iter()
            .map(|t| {
                self.latest.insert(t.nodeid.clone(), t.clone());
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
}
