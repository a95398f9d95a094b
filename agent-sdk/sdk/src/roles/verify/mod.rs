//! A pass proven, not reported: the verdict that can meet the gate is a re-run of the tests as
//! they were when the task began, against the code as it is now, in a throw-away copy the fix
//! never touched — with the task's acceptance tests, which the model never saw, beside them.
//!
//! - [`Origin`]: recorded before the first run — the files the task did not allow the fix to
//!   change ([`pinned`]), git HEAD and diff hash, and the first full run's outcomes.
//! - [`copy`]: the clean copy (dependencies linked, caches left out), outside the project.
//! - [`acceptance`]: acceptance tests read from a git revision into the copy only.
//! - [`judge`]: gate, fail-to-pass, pass-to-pass, acceptance, an unwritten copy.
//!
//! Python runs isolated there (`RunOptions::isolated`): a module at the project root cannot
//! stand in for pytest or the standard library.
//!
//! [`Origin`]: crate::roles::verify::origin::Origin
//! [`pinned`]: crate::roles::verify::pinned
//! [`copy`]: crate::roles::verify::copy
//! [`acceptance`]: crate::roles::verify::acceptance
//! [`judge`]: crate::roles::verify::judge

pub(crate) mod acceptance;
pub(crate) mod copy;
pub(crate) mod judge;
pub(crate) mod known_bad;
pub(crate) mod origin;
pub(crate) mod pinned;

use super::tree_watch::TreeState;
use super::RoleError;
use crate::runners::{run_tests, Framework, Report, RunOptions, Selection};
use crate::wire::Task;
use acceptance::Acceptance;
use judge::{judge, Expected, Judgement};
use origin::Origin;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The verdict re-run and what it showed.
pub(crate) struct Verification {
    /// The run's report (acceptance tests included).
    pub report: Report,
    /// Its run directory (in the project's `.huddle/runs`).
    pub run_dir: PathBuf,
    /// The copy it ran in, kept until the run is recorded.
    pub copy: tempfile::TempDir,
    /// The findings.
    pub judgement: Judgement,
}

/// What the re-run needs beyond the origin.
pub(crate) struct Plan<'a> {
    pub project: &'a Path,
    pub framework: Framework,
    pub timeout: Duration,
    /// What a full run runs (the executor's layer may name paths).
    pub full: &'a Selection,
    pub task: &'a Task,
    pub gate: f64,
    /// The ids the checkout's last full run reported.
    pub checkout: std::collections::BTreeSet<String>,
}

impl<'a> Plan<'a> {
    /// The re-run of a cycle's `runs` for `task`, held to `gate`.
    pub fn of(
        runs: &'a super::runs::Runs,
        task: &'a Task,
        timeout: Duration,
        gate: f64,
    ) -> Plan<'a> {
        Plan {
            project: &runs.project,
            framework: runs.framework,
            timeout,
            full: runs.full_selection(),
            task,
            gate,
            checkout: runs.latest.keys().cloned().collect(),
        }
    }
}

/// The tests the task names (`metadata.targets`): node ids, or files.
pub(crate) fn targets(task: &Task) -> Vec<String> {
    task.metadata
        .get("targets")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Re-runs the tests in a clean copy and judges the run. Errors are settings that cannot
/// work (bad `acceptance`) and a runner that cannot run.
pub(crate) async fn verify(origin: &Origin, plan: &Plan<'_>) -> Result<Verification, RoleError> {
    let acceptance = Acceptance::from_metadata(&plan.task.metadata).map_err(RoleError::Config)?;
    let started = std::time::Instant::now();
    let copy = tokio::task::spawn_blocking({
        let project = plan.project.to_path_buf();
        move || copy::mirror(&project)
    })
    .await
    .map_err(|e| io_error("copying the project", std::io::Error::other(e)))?
    .map_err(|e| io_error("copying the project", e))?;
    origin
        .restore_into(copy.path())
        .map_err(|e| io_error("restoring the task's starting files", e))?;
    let acceptance_files = match &acceptance {
        Some(a) => a
            .write_into(plan.project, copy.path())
            .await
            .map_err(RoleError::Config)?,
        None => Vec::new(),
    };
    let selection = match plan.full {
        Selection::Paths(paths) if !acceptance_files.is_empty() => Selection::Paths(
            paths
                .iter()
                .cloned()
                .chain(acceptance_files.clone())
                .collect(),
        ),
        other => other.clone(),
    };
    tracing::info!(
        "verdict re-run in a clean copy: {} file(s) as the task began, {} acceptance file(s)",
        origin.pinned_count(),
        acceptance_files.len()
    );
    let before = TreeState::capture(copy.path());
    let copied = started.elapsed();
    let opts = RunOptions {
        selection,
        timeout: plan.timeout,
        isolated: true,
        runs_dir: Some(plan.project.join(".huddle").join("runs")),
        ..RunOptions::default()
    };
    let outcome = run_tests(copy.path(), plan.framework, &opts)
        .await
        .map_err(|e| RoleError::Runner {
            tool: plan.framework.name().to_string(),
            source: e,
        })?;
    let ran = started.elapsed() - copied;
    let written = before.written_since(&TreeState::capture(copy.path()));
    let targets = targets(plan.task);
    let mut judgement = judge(
        &outcome.report,
        &Expected {
            gate: plan.gate,
            targets: &targets,
            first_run: &origin.first_run,
            acceptance: &acceptance_files,
            written: &written,
            checkout: &plan.checkout,
        },
    );
    if origin.policy.tests_only && judgement.problems.is_empty() {
        if let Some(rev) = known_bad::revision(&plan.task.metadata).map_err(RoleError::Config)? {
            let failing_at_start: Vec<String> = origin
                .first_run
                .iter()
                .filter(|(id, v)| **v == crate::cycles::Verdict::Fail && !id.starts_with('['))
                .map(|(id, _)| id.clone())
                .collect();
            let (json, problem) = known_bad::check(
                plan.project,
                copy.path(),
                &rev,
                failing_at_start,
                plan.framework,
                plan.timeout,
                &origin.policy,
            )
            .await
            .map_err(RoleError::Config)?;
            judgement.json["knownBad"] = json;
            if let Some(p) = problem {
                judgement.problems.push(p.clone());
                if let Some(list) = judgement.json["problems"].as_array_mut() {
                    list.push(p.into());
                }
            }
        }
    }
    if let Some(o) = judgement.json.as_object_mut() {
        o.insert(
            "startedFrom".into(),
            serde_json::json!({"gitHead": origin.git_head, "diffHash": origin.diff_hash}),
        );
        o.insert("pinnedFiles".into(), origin.pinned_count().into());
        // What the re-run cost: making the copy, and the run (BENCHMARKS.md, "Verification").
        o.insert(
            "seconds".into(),
            serde_json::json!({"copy": secs(copied), "run": secs(ran)}),
        );
    }
    Ok(Verification {
        report: outcome.report,
        run_dir: outcome.run_dir,
        copy,
        judgement,
    })
}

/// `git -C project args…`'s output, or what it printed on failure.
async fn git(project: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let out = tokio::process::Command::new("git")
        .arg("-C")
        .arg(project)
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .await
        .map_err(|e| format!("git: {e}"))?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(format!(
            "git {}: {}",
            args.first().unwrap_or(&""),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn secs(d: Duration) -> f64 {
    (d.as_secs_f64() * 1000.0).round() / 1000.0
}

fn io_error(what: &str, e: std::io::Error) -> RoleError {
    RoleError::Config(format!("{what} for the verdict re-run: {e}"))
}

/// A verdict re-run as the cycle's report uses it.
pub(crate) struct Confirmed {
    /// `verification` in `test_result` and the task's result.
    pub json: Value,
    /// The re-run's report and run directory, when there was one: the verdict's counts.
    pub run: Option<(Report, PathBuf)>,
}

/// After a cycle: when its gate held, re-runs in a clean copy, records that run in the test
/// history (it becomes the completion's evidence) and turns `finish` into a miss when the
/// re-run does not hold. Tiered runs are judged in the checkout (said in the answer).
pub(crate) async fn confirm(
    origin: &mut Origin,
    plan: &Plan<'_>,
    runs: &super::runs::Runs,
    finish: &mut crate::cycles::Finish,
    history: &mut super::history::RunHistory,
) -> Result<Option<Confirmed>, RoleError> {
    if !finish.passed {
        return Ok(None);
    }
    if runs.tiered.is_some() {
        return Ok(Some(Confirmed {
            json: serde_json::json!({"skipped": "tiered runs are judged in the checkout, not re-run in a clean copy"}),
            run: None,
        }));
    }
    origin.first_full_run(&runs.first_full);
    let v = verify(origin, plan).await?;
    history
        .record(v.copy.path(), &v.report, Some(&v.run_dir))
        .await;
    finish.pass_rate = v.report.pass_rate();
    if !v.judgement.problems.is_empty() {
        tracing::warn!(
            "the verdict does not hold in a clean copy: {}",
            v.judgement.problems.join("; ")
        );
        finish.passed = false;
        finish.reason = crate::cycles::StopReason::NotVerified {
            problems: v.judgement.problems.clone(),
        };
    }
    Ok(Some(Confirmed {
        json: v.judgement.json,
        run: Some((v.report, v.run_dir)),
    }))
}
