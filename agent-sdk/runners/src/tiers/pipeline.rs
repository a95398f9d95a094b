//! The tiers as one pipeline: unit → PBT → integration → e2e, serially, each its own run
//! (per runner: the e2e tier of a JavaScript project runs Playwright) with its own run
//! directory and report. A failing tier never stops the later ones; a tier that does not run
//! says why ([`SkipReason`]). Services are started before each tier that needs them and
//! stopped after it. Everything lands in `<runs>/tiers/<stamp>/`: `tiers.json` (this
//! module's [`TiersReport`]), one directory per tier with its runs and service logs.

use super::classify::{classify_project, Classified, TierOverrides};
use super::e2e_capture::{pytest_addopts, Capture};
use super::failure_class::classify_failure;
use super::project_file::{self, ProjectFile, TierPaths};
use super::report::artifacts;
pub use super::report::{ClassifiedFailure, TierOutcome, TierRunRef, TiersReport};
use super::service_plan::service_specs;
use super::service_pool::{source_fingerprint, ServicePool};
use super::services::{self, ServiceStatus};
use super::tier_patterns::TierPatterns;
use super::tier_runs::tier_runs;
use super::{SkipReason, Tier};
use crate::error::RunnerError;
use crate::framework::Framework;
use crate::options::RunOptions;
use crate::report::{Report, Summary};
use crate::run::{canonical_project, run_tests};
use crate::rundir;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// What a tiers run is asked to do beyond [`RunOptions`] (whose `timeout` is the unit
/// tier's; PBT gets twice as long).
#[derive(Debug, Clone, Default)]
pub struct TiersOptions {
    /// Options for every tier's run.
    pub run: RunOptions,
    /// The whole pipeline's time; a tier that would start after it is skipped
    /// (`budget_exhausted`), and a tier's timeout never goes past it.
    pub budget: Option<Duration>,
    /// Tier overrides from the task's metadata.
    pub task_tiers: Option<TierPaths>,
    /// Only these files per tier (a diff-scoped run); `None`: every file of the tier.
    pub scope: Option<BTreeMap<Tier, Vec<String>>>,
    /// The Chromium executable for e2e tests (wins over `huddle.toml` `[e2e] chromium`).
    pub chromium: Option<String>,
    /// What pytest-playwright records in the e2e tier (wins over `huddle.toml` `[e2e]
    /// capture`; default: failures' traces and screenshots).
    pub capture: Option<Capture>,
    /// Services kept up across runs (the tester's runs of one task); `None`: started before
    /// each tier that needs them and stopped after it.
    pub services: Option<ServicePool>,
}

/// Reads the project file and classifies the project's tests.
pub fn plan(
    project: &Path,
    framework: Framework,
    task_tiers: Option<&TierPaths>,
) -> Result<(ProjectFile, Vec<Classified>), RunnerError> {
    let file = project_file::read(project)?.unwrap_or_default();
    let project_patterns = TierPatterns::new(&file.tiers).map_err(RunnerError::Unsupported)?;
    let task_patterns = task_tiers
        .map(TierPatterns::new)
        .transpose()
        .map_err(|e| RunnerError::Unsupported(format!("the task's tiers metadata: {e}")))?;
    let overrides = TierOverrides {
        task: task_patterns.as_ref(),
        project: Some(&project_patterns),
    };
    let classified = classify_project(project, framework, &overrides)?;
    Ok((file, classified))
}

/// Runs the tiers of `project`.
pub async fn run_tiers(
    project: &Path,
    framework: Framework,
    opts: &TiersOptions,
) -> Result<TiersReport, RunnerError> {
    let project = canonical_project(project)?;
    let (file, classified) = plan(&project, framework, opts.task_tiers.as_ref())?;
    let runs_dir = opts
        .run
        .runs_dir
        .clone()
        .unwrap_or_else(|| rundir::default_runs_dir(&project));
    let tiers_root = runs_dir.join("tiers");
    let dir = rundir::create(&tiers_root)?;
    let mut notes = Vec::new();
    let specs = service_specs(&project, &file, &classified, &mut notes);
    // Only a run whose services outlive it needs to know what they were started from.
    let fingerprint = match &opts.services {
        Some(_) => {
            let tests: Vec<String> = classified.iter().map(|c| c.file.clone()).collect();
            source_fingerprint(&project, &tests)
        }
        None => 0,
    };
    let started = Instant::now();
    let mut tiers = Vec::new();
    for tier in Tier::ALL {
        let files: Vec<&Classified> = classified
            .iter()
            .filter(|c| c.tier == tier)
            .filter(|c| {
                opts.scope
                    .as_ref()
                    .is_none_or(|s| s.get(&tier).is_some_and(|f| f.contains(&c.file)))
            })
            .collect();
        let ctx = TierCtx {
            project: &project,
            framework,
            opts,
            file: &file,
            specs: &specs,
            dir: &dir,
            started,
            fingerprint,
        };
        tiers.push(ctx.run(tier, &files).await?);
    }
    let ran_any = tiers.iter().any(|t| t.skipped.is_none());
    let all_good = tiers
        .iter()
        .all(|t| t.passed || t.skipped == Some(SkipReason::NoTests));
    let report = TiersReport {
        root: project.display().to_string(),
        framework,
        verdict: if ran_any && all_good {
            "passed"
        } else {
            "failed"
        },
        tiers,
        notes,
        dir: dir.clone(),
    };
    let json = serde_json::to_vec_pretty(&report).expect("tier reports serialise");
    rundir::write(&dir, "tiers.json", &json)?;
    rundir::prune(&tiers_root, opts.run.output.keep_runs)?;
    Ok(report)
}

struct TierCtx<'a> {
    project: &'a Path,
    framework: Framework,
    opts: &'a TiersOptions,
    file: &'a ProjectFile,
    specs: &'a BTreeMap<String, project_file::ServiceSpec>,
    dir: &'a Path,
    started: Instant,
    /// The project's [`source_fingerprint`] when services are kept up across runs.
    fingerprint: u64,
}

impl TierCtx<'_> {
    async fn run(&self, tier: Tier, files: &[&Classified]) -> Result<TierOutcome, RunnerError> {
        let timeout = if tier == Tier::Pbt {
            self.opts.run.timeout * 2
        } else {
            self.opts.run.timeout
        };
        let mut out = TierOutcome {
            tier,
            files: files.iter().map(|c| c.file.clone()).collect(),
            skipped: None,
            skip_detail: None,
            summary: Summary::default(),
            passed: false,
            timeout_secs: timeout.as_secs(),
            runs: Vec::new(),
            failures: Vec::new(),
            services: Vec::new(),
            services_reused: false,
            artifacts: Vec::new(),
            reports: Vec::new(),
        };
        if files.is_empty() {
            out.skipped = Some(SkipReason::NoTests);
            return Ok(out);
        }
        let timeout = match self.opts.budget {
            Some(budget) => {
                let left = budget.saturating_sub(self.started.elapsed());
                if left < Duration::from_secs(1) {
                    out.skipped = Some(SkipReason::BudgetExhausted);
                    out.skip_detail = Some(format!(
                        "the pipeline's budget of {}s was used by earlier tiers",
                        budget.as_secs()
                    ));
                    return Ok(out);
                }
                timeout.min(left)
            }
            None => timeout,
        };
        out.timeout_secs = timeout.as_secs();
        if tier == Tier::Pbt {
            let paths: Vec<String> = files.iter().map(|c| c.file.clone()).collect();
            let probe = super::pbt::missing_pbt_library(
                self.project,
                self.framework,
                &paths,
                &self.opts.run,
            );
            // The probe runs the project's interpreter in the project: sandboxed too.
            let jail = crate::sandbox::for_run(self.project, self.dir, &self.opts.run)?;
            let missing = crate::sandbox::confined(jail, probe).await?;
            if let Some(missing) = missing {
                out.skipped = Some(SkipReason::NoPbtLibrary);
                out.skip_detail = Some(missing);
                return Ok(out);
            }
        }
        let tier_dir = self.dir.join(tier.as_str());
        let mut env = self.opts.run.env.clone();
        let mut running = None;
        // The tests join the services' sandboxed loopback, when there are services.
        let mut net = None;
        if tier.needs_services() && !self.specs.is_empty() {
            let sandbox = self.opts.run.sandbox.resolve()?;
            let sandbox = sandbox.as_deref();
            let log_dir = tier_dir.join("services");
            let statuses = match &self.opts.services {
                // Kept up across tiers and runs: never stopped here.
                Some(pool) => {
                    let lease = pool
                        .acquire(
                            self.project,
                            self.specs,
                            &log_dir,
                            &env,
                            self.fingerprint,
                            self.opts.run.kill_grace,
                            sandbox,
                        )
                        .await?;
                    env.extend(lease.env);
                    net = lease.net;
                    out.services_reused = lease.reused;
                    lease.statuses
                }
                None => {
                    let (r, statuses) =
                        services::start_all(self.project, self.specs, &log_dir, &env, sandbox)
                            .await?;
                    env.extend(r.env.iter().cloned());
                    net = r.net.clone();
                    running = Some(r);
                    statuses
                }
            };
            let unhealthy: Vec<&ServiceStatus> = statuses.iter().filter(|s| !s.healthy).collect();
            if !unhealthy.is_empty() {
                out.skipped = Some(SkipReason::ServiceUnhealthy);
                out.skip_detail = Some(
                    unhealthy
                        .iter()
                        .map(|s| {
                            format!(
                                "service {} ({}): {}\nlog tail ({}):\n{}",
                                s.name,
                                s.check,
                                s.problem.as_deref().unwrap_or("unhealthy"),
                                s.log.display(),
                                s.log_tail.as_deref().unwrap_or("")
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("\n"),
                );
            }
            out.services = statuses;
        }
        if out.skipped.is_none() {
            if tier == Tier::E2e {
                self.browser_env(&mut env);
            }
            let result = self
                .run_groups(tier, files, timeout, &tier_dir, (env, net), &mut out)
                .await;
            if let Some(r) = running.take() {
                r.stop(self.opts.run.kill_grace).await;
            }
            result?;
        } else if let Some(r) = running.take() {
            r.stop(self.opts.run.kill_grace).await;
        }
        Ok(out)
    }

    fn browser_env(&self, env: &mut Vec<(String, String)>) {
        let chromium = self
            .opts
            .chromium
            .clone()
            .or_else(|| self.file.e2e.chromium.clone())
            .or_else(|| std::env::var("HUDDLE_CHROMIUM").ok());
        if let Some(c) = chromium {
            env.push(("HUDDLE_CHROMIUM".into(), c));
        }
        env.push(("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD".into(), "1".into()));
    }

    /// Runs the tier's files, one run per runner, and fills in counts and failures.
    async fn run_groups(
        &self,
        tier: Tier,
        files: &[&Classified],
        timeout: Duration,
        tier_dir: &Path,
        (env, net): (Vec<(String, String)>, Option<crate::sandbox::NetNs>),
        out: &mut TierOutcome,
    ) -> Result<(), RunnerError> {
        for run in tier_runs(self.project, tier, files) {
            let fw = run.framework;
            let mut run_env = env.clone();
            if tier == Tier::E2e && fw == Framework::Pytest {
                run_env.push(("PYTEST_ADDOPTS".into(), self.pytest_playwright_args()));
            }
            let opts = RunOptions {
                selection: run.selection,
                build_tags: run.build_tags,
                timeout,
                env: run_env,
                runs_dir: Some(tier_dir.to_path_buf()),
                sandbox_net: net.clone(),
                ..self.opts.run.clone()
            };
            let outcome = run_tests(self.project, fw, &opts).await?;
            let r = &outcome.report;
            for t in r.failures() {
                let (class, evidence) = classify_failure(t);
                out.failures.push(ClassifiedFailure {
                    test: t.nodeid.clone(),
                    class,
                    evidence,
                });
            }
            out.runs.push(TierRunRef {
                framework: fw,
                run_dir: outcome.run_dir.clone(),
                summary: r.summary,
                timed_out: r.timed_out,
            });
            out.reports.push(outcome.report);
        }
        out.summary = sum(out.reports.iter().map(|r| r.summary));
        out.passed = out.reports.iter().all(Report::all_passed);
        out.artifacts = artifacts(self.dir, tier_dir);
        Ok(())
    }

    /// pytest-playwright's options (`PYTEST_ADDOPTS`): the caller's own `PYTEST_ADDOPTS`
    /// (from the run's environment, else huddle's), the capture asked for and the browser
    /// channel where the project sets neither, and the artifacts into the run's directory.
    fn pytest_playwright_args(&self) -> String {
        let user = self
            .opts
            .run
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == "PYTEST_ADDOPTS")
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var("PYTEST_ADDOPTS").ok());
        let project = crate::pytest_config::PytestConfig::read(self.project);
        pytest_addopts(
            user.as_deref(),
            &project.addopts,
            self.opts
                .capture
                .or(self.file.e2e.capture)
                .unwrap_or_default(),
            self.file.e2e.browser_channel.as_deref(),
            // Into each run's own directory, beside its report.json.
            &Path::new(crate::adapters::RUN_DIR).join("playwright-output"),
        )
    }
}

fn sum(summaries: impl Iterator<Item = Summary>) -> Summary {
    let mut s = Summary::default();
    for x in summaries {
        s.passed += x.passed;
        s.failed += x.failed;
        s.error += x.error;
        s.skipped += x.skipped;
        s.total += x.total;
    }
    s
}
