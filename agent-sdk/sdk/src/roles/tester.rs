//! The tester role (`TEST-*`): the [`TesterCycle`] over the project's real test suite, fixes
//! anywhere the guardrails allow, `test_result` at the end and `fix_required` when a test fix
//! cannot solve it.

use super::changes::{change_fields, ChangeSummary};
use super::drive::drive;
use super::evidence::evidence;
use super::history::RunHistory;
use super::repair::Repairer;
use super::report::{round, stop_text, CycleSummary};
use super::runs::Runs;
use super::settings::RoleSettings;
use super::setup::{interrupted, prepare, report_failure, task_cycle, task_policy, task_suite};
use super::verify::origin::Origin;
use super::verify::{confirm, Plan};
use super::RoleError;
use crate::cycles::tester::TesterCycle;
use crate::cycles::{Finish, StopReason};
use crate::edits::Policy;
use crate::wire::Task;
use crate::worker::{Handler, HandlerResult, ReleaseTask, TaskContext};
use crate::workspace::Workspace;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// The tester role as a worker handler.
#[derive(Debug, Clone)]
pub struct TesterRole {
    settings: Arc<RoleSettings>,
}

impl TesterRole {
    /// A tester working on `settings.project`.
    pub fn new(settings: RoleSettings) -> TesterRole {
        TesterRole {
            settings: Arc::new(settings),
        }
    }
}

impl Handler for TesterRole {
    fn handle(
        &self,
        task: Task,
        ctx: TaskContext,
    ) -> impl std::future::Future<Output = HandlerResult> + Send {
        let settings = self.settings.clone();
        async move { run(&settings, &task, &ctx).await }
    }
}

async fn run(settings: &RoleSettings, task: &Task, ctx: &TaskContext) -> HandlerResult {
    let p = prepare(settings, task, ctx).await?;
    let limits = match p.cycles.tester.with_task(task_cycle(task)) {
        Ok(l) => l,
        Err(e) => return Err(report_failure(&p.reporter, RoleError::Config(e.to_string())).await),
    };
    let workspace = Workspace::acquire(
        &settings.project,
        &settings.workspace,
        task,
        &p.reporter,
        ctx,
    )
    .await?;
    let project = workspace.project.clone();
    let timeout = Duration::from_secs(limits.run_timeout_secs);
    let mut runs = Runs::new(&project, p.framework, timeout, task_suite(task), false);
    runs.tiered = match super::tiered::Tiered::for_task(&project, task) {
        Ok(t) => t,
        Err(e) => return Err(report_failure(&p.reporter, RoleError::Config(e)).await),
    };
    let policy = task_policy(task, Policy::tester());
    let mut origin = match Origin::capture(&project, &policy).await {
        Ok(o) => o,
        Err(e) => {
            let e = RoleError::Config(format!("recording the task's starting files: {e}"));
            return Err(report_failure(&p.reporter, e).await);
        }
    };
    let mut repairer = Repairer::new(
        settings.llm.clone(),
        settings.llm_missing.clone(),
        policy,
        &project,
    )
    .with_ledger(ctx.client().clone(), &task.id);
    let mut cycle = TesterCycle::new(limits.clone());
    let mut history = RunHistory::new(ctx.client().clone(), p.project.clone(), task.id.clone());
    let driven = drive(
        &mut cycle,
        &mut runs,
        &mut repairer,
        &p.reporter,
        ctx,
        &p.task_text,
        Some(&mut history),
    )
    .await;
    // The task's runs are over: the services kept up across them go now.
    if let Some(tiered) = &runs.tiered {
        tiered.stop_services().await;
    }
    let mut finish = match driven {
        Ok(f) => f,
        Err(i) => return Err(interrupted(&p.reporter, i).await),
    };
    if let Some(note) = repairer.budget_refused.take() {
        return Err(ReleaseTask::new(note).into());
    }
    let plan = Plan::of(&runs, task, timeout, limits.quality_gate);
    let confirmed = match confirm(&mut origin, &plan, &runs, &mut finish, &mut history).await {
        Ok(c) => c,
        Err(e) => return Err(report_failure(&p.reporter, e).await),
    };
    let (report, run_dir) = match confirmed.as_ref().and_then(|c| c.run.clone()) {
        Some((report, dir)) => (Some(report), Some(dir)),
        None => (runs.last_full.clone(), runs.last_full_dir.clone()),
    };
    // Before giving up under the gate, a person may accept the run as it is (team setting).
    let mut gates = task.gates.clone();
    gates.extend(super::ask_person::below_gate(ctx, &task.id, &finish, limits.quality_gate).await);
    let summary = CycleSummary {
        task_id: task.id.clone(),
        title: "Test cycle".into(),
        finish: finish.clone(),
        history: cycle.history().to_vec(),
        report: report.clone(),
        run_dir,
        flaky: cycle.flaky().iter().cloned().collect(),
        vanished: runs.vanished.clone(),
        environment: cycle.environment().iter().cloned().collect(),
        max_iterations: limits.max_iterations,
        quality_gate: limits.quality_gate,
        tiers: runs
            .tiered
            .as_ref()
            .and_then(super::tiered::Tiered::summary),
        gates,
    };
    let evidence = evidence(&project, report.as_ref(), &runs.vanished, &history.last).await;
    let verification = confirmed.map(|c| c.json);
    conclude(
        &summary,
        &p.reporter.after_close(ctx),
        &repairer,
        evidence,
        verification,
        (&workspace, settings.workspace.keep_failed),
    )
    .await
}

/// Posts `error` when the model could not be used at all, or `fix_required` when the stop
/// calls for it (and for failures of a broken environment set aside); then `test_result` with
/// what the cycle changed and the evidence of the verdict run. `reporter` is expected to post
/// after the task is closed. Completes the task when the gate holds, else fails it with the
/// reason.
pub(crate) async fn conclude(
    summary: &CycleSummary,
    reporter: &super::Reporter,
    repairer: &Repairer,
    evidence: Value,
    verification: Option<Value>,
    (workspace, keep_failed): (&Workspace, bool),
) -> HandlerResult {
    let model_use = (repairer.calls, repairer.tokens());
    let f: &Finish = &summary.finish;
    let failing: Vec<String> = summary
        .by_severity()
        .into_iter()
        .flat_map(|(_, ids)| ids)
        .collect();
    let required = match &f.reason {
        StopReason::Stagnation { tests } => Some((
            "the same tests keep failing with the same assertion after repeated fixes".to_string(),
            tests.clone(),
            "stagnation",
            stop_text(f, summary.quality_gate),
        )),
        StopReason::CannotFix { category, reason } => Some((
            reason.clone(),
            failing.clone(),
            category.as_str(),
            stop_text(f, summary.quality_gate),
        )),
        StopReason::Unavailable { reason } if !f.passed => Some((
            reason.clone(),
            failing.clone(),
            if repairer.gave_up.is_some() {
                "model"
            } else {
                "other"
            },
            format!("{} failing test(s) could not be repaired", failing.len()),
        )),
        _ => None,
    };
    let environment_stop =
        matches!(&f.reason, StopReason::CannotFix { category, .. } if category == "environment");
    if let Some(failure) = &repairer.model_failure {
        reporter.error("model_unreachable", failure, "llm").await;
    } else if let Some((reason, tests, category, details)) = &required {
        reporter
            .fix_required(reason, tests, category, details)
            .await;
    }
    let set_aside: Vec<String> = summary
        .environment
        .iter()
        .filter(|t| failing.contains(t))
        .cloned()
        .collect();
    if !set_aside.is_empty() && !environment_stop {
        reporter
            .fix_required(
                "the environment is broken for these tests; the other failures were repaired",
                &set_aside,
                "environment",
                &stop_text(f, summary.quality_gate),
            )
            .await;
    }
    let changes = repairer.changes.summary();
    let mut data = summary.test_result();
    data["modelCalls"] = model_use.0.into();
    data["modelTokens"] = model_use.1.into();
    if let Some(markdown) = data["summary"].as_str() {
        data["summary"] = changes_markdown(markdown, &changes).into();
    }
    if let Some(o) = data.as_object_mut() {
        o.extend(change_fields(&changes.files, &changes.diff));
        if !changes.changed_expectations.is_empty() {
            o.insert(
                "changedExpectations".into(),
                changes.changed_expectations.clone().into(),
            );
        }
        o.insert("evidence".into(), evidence);
        if let Some(v) = verification {
            o.insert("verification".into(), v);
        }
    }
    // The task's result is stored too: no secret in it, as in the message.
    crate::runners::scrub::scrub_json_value(&mut data);
    let accepted = summary.accepted_below_gate();
    if let Some(by) = &accepted {
        data["acceptedBelowGate"] = serde_json::json!(by);
    }
    let mut text = format!(
        "{}: {} ({}%) after {} iteration(s), gate {}{}",
        summary.task_id,
        data["counts"].as_str().unwrap_or(""),
        round(f.pass_rate),
        f.iterations,
        match (&accepted, f.passed) {
            (_, true) => "met".to_string(),
            (Some(q), false) => format!(
                "not met, accepted by {} ({})",
                q.answered_by.as_deref().unwrap_or("a person"),
                q.id
            ),
            (None, false) => "not met".to_string(),
        },
        flags(summary, &changes.files),
    );
    let passed = f.passed || accepted.is_some();
    if let Some(base) = workspace.base() {
        data["base"] = base.into();
    }
    if passed || keep_failed {
        let message = commit_message(summary, &text, repairer.model());
        match workspace
            .deliver(&summary.task_id, &changes.files, &message)
            .await
        {
            Some(Ok(delivered)) => {
                text.push_str(&format!("; the fix is on branch {}", delivered.branch));
                if let (Some(o), Value::Object(fields)) = (data.as_object_mut(), delivered.fields())
                {
                    o.extend(fields);
                }
            }
            Some(Err(e)) if passed => {
                // The fix would be lost with the worktree's reset: not a completed task.
                let why = format!("the fix met the gate but could not be committed: {e}");
                reporter.error("delivery_failed", &why, "git").await;
                return Err(why.into());
            }
            Some(Err(e)) => tracing::warn!("{}: keeping the failed fix: {e}", summary.task_id),
            None => {}
        }
    }
    reporter.post("test_result", text, data.clone()).await;
    if passed {
        data.as_object_mut().map(|o| o.remove("summary"));
        Ok(data)
    } else {
        // A verdict, not an accident: another try would run the same cycle on the same code.
        // The task keeps the verdict's evidence, files and diff, as a completed one does.
        data.as_object_mut().map(|o| o.remove("summary"));
        Err(crate::worker::FinalFailure::new(format!(
            "quality gate not met: {}",
            stop_text(f, summary.quality_gate)
        ))
        .with_result(data)
        .into())
    }
}

/// The commit of a delivered fix: the verdict line (it names the task), then trailers a
/// script can read.
fn commit_message(summary: &CycleSummary, verdict: &str, model: Option<&str>) -> String {
    format!(
        "{verdict}\n\n{} by huddle.\n\nHuddle-Task: {}\nHuddle-Model: {}\n",
        summary.title,
        summary.task_id,
        model.unwrap_or("none"),
    )
}

/// The markdown report with what the cycle changed: the files (test files marked) and, for
/// the executor, the expectations it rewrote, to be reviewed.
fn changes_markdown(markdown: &str, changes: &ChangeSummary) -> String {
    let mut out = markdown.to_string();
    if changes.files.is_empty() {
        return out;
    }
    out.push_str("\n### Changed files\n\n");
    for f in &changes.files {
        let mark = if crate::edits::is_test_file(f) {
            " (test file)"
        } else {
            ""
        };
        out.push_str(&format!("- `{f}`{mark}\n"));
    }
    if !changes.changed_expectations.is_empty() {
        out.push_str("\n**Expectations changed — review them:**\n\n");
        for e in &changes.changed_expectations {
            out.push_str(&format!(
                "- `{}`: was `{}`\n",
                e["path"].as_str().unwrap_or("-"),
                e["was"].as_str().unwrap_or("-")
            ));
        }
    }
    out
}

/// What a reader of the one-line summary must not miss: vanished tests, changed test files.
fn flags(summary: &CycleSummary, changed: &[String]) -> String {
    let mut out = String::new();
    if !summary.vanished.is_empty() {
        out.push_str(&format!(
            "; {} test(s) no longer reported, counted as failed",
            summary.vanished.len()
        ));
    }
    let tests = changed
        .iter()
        .filter(|f| crate::edits::is_test_file(f))
        .count();
    if tests > 0 {
        out.push_str(&format!("; {tests} test file(s) changed"));
    }
    out
}
