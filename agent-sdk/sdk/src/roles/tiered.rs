//! The tester's tiered mode: when the task asks for it (metadata `tiers`: `true`, or an object
//! of tier overrides like `{"integration": ["tests/api"]}`) or the project has a
//! `huddle.toml` with `[tiers]` or `[services]`, every run of the cycle is the tiers pipeline
//! (unit → PBT → integration → e2e, services started for the last two), narrowed to the
//! tests a selection calls for. Its tier reports merge into one report for the cycle; a tier
//! that could not run (an unhealthy service, a spent budget, a missing PBT library) enters it
//! as a `[tier:NAME]` error, which the fix cycle sets aside as infrastructure, never repairs.
//! The services start once per task and stay up across its runs.

use crate::runners::error::RunnerError;
use crate::runners::options::RunOptions;
use crate::runners::report::{Outcome, Report, Summary, TestResult};
use crate::runners::tiers::classify::Classified;
use crate::runners::tiers::diff_scope::scope;
use crate::runners::tiers::pipeline::{plan, run_tiers, TiersOptions, TiersReport};
use crate::runners::tiers::project_file::{self, TierPaths};
use crate::runners::tiers::service_pool::ServicePool;
use crate::runners::tiers::{SkipReason, Tier};
use crate::runners::{Framework, Selection};
use crate::wire::Task;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// The prefix of a skipped tier's entry in the merged report.
pub(crate) const TIER_ENTRY_PREFIX: &str = "[tier:";

/// A task's tiered runs.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tiered {
    /// The task's own tier overrides.
    task_tiers: Option<TierPaths>,
    /// The last pipeline run of every tier's tests (the verdict's).
    pub last_full: Option<TiersReport>,
    /// The services, started by the first run that needs them and kept up across the task's
    /// runs (a narrowed re-run does not restart them); stopped by [`Tiered::stop_services`]
    /// (or, failing that, killed when the task's runs are dropped).
    services: ServicePool,
}

impl Tiered {
    /// Tiered mode for `task` in `project`, when asked for (see the module docs). A task
    /// `tiers` value that is neither a boolean nor tier overrides is an error.
    pub fn for_task(project: &Path, task: &Task) -> Result<Option<Tiered>, String> {
        let task_tiers = match task.metadata.get("tiers") {
            Some(Value::Bool(false)) => return Ok(None),
            Some(Value::Bool(true)) => Some(None),
            Some(v @ Value::Object(_)) => Some(Some(
                serde_json::from_value::<TierPaths>(v.clone())
                    .map_err(|e| format!("task metadata `tiers`: {e}"))?,
            )),
            Some(other) => {
                return Err(format!(
                    "task metadata `tiers` must be true, false or tier paths, not {other}"
                ))
            }
            None => None,
        };
        if let Some(task_tiers) = task_tiers {
            return Ok(Some(Tiered {
                task_tiers,
                ..Tiered::default()
            }));
        }
        let file = project_file::read(project).map_err(|e| e.to_string())?;
        Ok(file
            .filter(|f| !f.tiers.is_empty() || !f.services.is_empty())
            .map(|_| Tiered::default()))
    }

    /// Runs the tiers for `selection` (everything, or the tiers' tests it calls for) and
    /// returns their reports merged.
    pub async fn run(
        &mut self,
        project: &Path,
        framework: Framework,
        timeout: Duration,
        selection: &Selection,
    ) -> Result<Report, RunnerError> {
        let (_, classified) = plan(project, framework, self.task_tiers.as_ref())?;
        let scope = scope_of(project, framework, &classified, selection);
        let full = scope.is_none();
        let opts = TiersOptions {
            run: RunOptions {
                timeout,
                ..RunOptions::default()
            },
            task_tiers: self.task_tiers.clone(),
            scope,
            services: Some(self.services.clone()),
            ..TiersOptions::default()
        };
        let report = run_tiers(project, framework, &opts).await?;
        let merged = merged(&report);
        if full {
            self.last_full = Some(report);
        }
        Ok(merged)
    }

    /// Stops the services kept up across the task's runs.
    pub async fn stop_services(&self) {
        self.services.stop(RunOptions::default().kill_grace).await;
    }

    /// Per-tier counts, skips and failure classes of the last full run, for `test_result`.
    pub fn summary(&self) -> Option<Value> {
        let report = self.last_full.as_ref()?;
        let tiers: Vec<Value> = report
            .tiers
            .iter()
            .map(|t| {
                json!({
                    "tier": t.tier,
                    "passed": t.passed,
                    "skipped": t.skipped,
                    "skipDetail": t.skip_detail,
                    "summary": t.summary,
                    "failures": t.failures,
                    "artifacts": t.artifacts,
                })
            })
            .collect();
        Some(json!({ "verdict": report.verdict, "tiers": tiers, "dir": report.dir }))
    }
}

/// The tiers' files a selection calls for; `None` (every file) for the whole suite or when
/// nothing maps.
fn scope_of(
    project: &Path,
    framework: Framework,
    classified: &[Classified],
    selection: &Selection,
) -> Option<BTreeMap<Tier, Vec<String>>> {
    let files: Vec<String> = match selection {
        Selection::All => return None,
        Selection::Paths(p) | Selection::Related(p) => p.clone(),
        // go's ids name a package, not a file.
        Selection::Tests(ids) if framework == Framework::Go => {
            crate::runners::tiers::go_tier::files_of_ids(project, classified, ids)
        }
        Selection::Tests(ids) => {
            let mut files: Vec<String> = Vec::new();
            for id in ids {
                let f = id.split("::").next().unwrap_or(id).to_string();
                if !files.contains(&f) {
                    files.push(f);
                }
            }
            files
        }
    };
    let s = scope(project, framework, classified, &files);
    (!s.files.is_empty()).then_some(s.files)
}

/// One report of every tier's tests, in tier order, with a `[tier:NAME]` error for each tier
/// that had tests and could not run.
pub(crate) fn merged(report: &TiersReport) -> Report {
    let mut tests: Vec<TestResult> = Vec::new();
    let (mut exitcode, mut timed_out, mut duration) = (0, false, 0.0);
    let mut created = None;
    for t in &report.tiers {
        for r in &t.reports {
            tests.extend(r.tests.iter().cloned());
            exitcode = exitcode.max(r.exitcode);
            timed_out |= r.timed_out;
            duration += r.duration;
            created.get_or_insert(r.created);
        }
        if let Some(reason) = t.skipped.filter(|r| *r != SkipReason::NoTests) {
            let mut e = TestResult::new(format!("{TIER_ENTRY_PREFIX}{}]", t.tier), Outcome::Error);
            e.longrepr = Some(format!(
                "the {} tier did not run ({reason}): {}",
                t.tier,
                t.skip_detail.as_deref().unwrap_or("")
            ));
            tests.push(e);
            exitcode = exitcode.max(1);
        }
    }
    Report {
        created: created.unwrap_or_default(),
        duration,
        exitcode,
        root: report.root.clone(),
        framework: report.framework,
        summary: Summary::of(&tests),
        tests,
        timed_out,
        command: Vec::new(),
        coverage: None,
        // Each tier lists its own (`summary`'s `artifacts`, relative to the pipeline's dir).
        artifacts: Vec::new(),
        flaky: Vec::new(),
        flaky_in_run: 0,
    }
}
