//! The executor role (`QARUN-*`): runs the layer's suite (`layer: L1|L2|L3` in the description
//! or `layer` in the metadata, default L1; metadata `paths` narrows the suite), repairs test
//! files only, and records its results in shared memory at `execution_results.<layer>` (and
//! `execution_results.pass_rate`, `.coverage`) with a merge patch.

use super::drive::drive;
use super::evidence::evidence;
use super::history::RunHistory;
use super::repair::Repairer;
use super::report::{round, CycleSummary};
use super::runs::Runs;
use super::settings::RoleSettings;
use super::setup::{interrupted, prepare, report_failure, task_cycle, task_policy, task_suite};
use super::tester::conclude;
use super::verify::origin::Origin;
use super::verify::{confirm, Plan};
use super::RoleError;
use crate::cycles::executor::ExecutorCycle;
use crate::cycles::StopReason;
use crate::edits::Policy;
use crate::wire::Task;
use crate::worker::{Handler, HandlerResult, ReleaseTask, TaskContext};
use crate::workspace::Workspace;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// The executor role as a worker handler.
#[derive(Debug, Clone)]
pub struct ExecutorRole {
    settings: Arc<RoleSettings>,
}

impl ExecutorRole {
    /// An executor working on `settings.project`.
    pub fn new(settings: RoleSettings) -> ExecutorRole {
        ExecutorRole {
            settings: Arc::new(settings),
        }
    }
}

impl Handler for ExecutorRole {
    fn handle(
        &self,
        task: Task,
        ctx: TaskContext,
    ) -> impl std::future::Future<Output = HandlerResult> + Send {
        let settings = self.settings.clone();
        async move { run(&settings, &task, &ctx).await }
    }
}

/// `L1`, `L2` or `L3` from the metadata's `layer`, else `layer: Ln` in the description, else L1.
pub fn layer(task: &Task) -> String {
    let valid = |s: &str| matches!(s, "L1" | "L2" | "L3");
    if let Some(l) = task
        .metadata
        .get("layer")
        .and_then(Value::as_str)
        .map(str::to_ascii_uppercase)
    {
        if valid(&l) {
            return l;
        }
    }
    let lower = task.description.to_ascii_lowercase();
    let mut rest = lower.as_str();
    while let Some(i) = rest.find("layer") {
        let after = rest[i + 5..].trim_start();
        if let Some(v) = after.strip_prefix(':').or_else(|| after.strip_prefix('=')) {
            let candidate: String = v
                .trim_start()
                .chars()
                .take(2)
                .collect::<String>()
                .to_ascii_uppercase();
            if valid(&candidate) {
                return candidate;
            }
        }
        rest = &rest[i + 5..];
    }
    "L1".into()
}

async fn run(settings: &RoleSettings, task: &Task, ctx: &TaskContext) -> HandlerResult {
    let p = prepare(settings, task, ctx).await?;
    let limits = match p.cycles.executor.with_task(task_cycle(task)) {
        Ok(l) => l,
        Err(e) => return Err(report_failure(&p.reporter, RoleError::Config(e.to_string())).await),
    };
    let layer = layer(task);
    let suite = task_suite(task);
    tracing::info!("{}: QA run of layer {layer}", task.id);
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
    let mut runs = Runs::new(&project, p.framework, timeout, suite, limits.coverage);
    let policy = task_policy(task, Policy::executor());
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
    let mut cycle = ExecutorCycle::new(limits.clone());
    let mut history = RunHistory::new(ctx.client().clone(), p.project.clone(), task.id.clone());
    let mut finish = match drive(
        &mut cycle,
        &mut runs,
        &mut repairer,
        &p.reporter,
        ctx,
        &p.task_text,
        Some(&mut history),
    )
    .await
    {
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
    // Coverage is measured in the checkout's runs; the verdict's counts come from the re-run.
    let coverage = runs
        .last_full
        .as_ref()
        .and_then(|r| r.coverage.as_ref())
        .map(|c| round(c.line_percent));
    let (report, run_dir) = match confirmed.as_ref().and_then(|c| c.run.clone()) {
        Some((report, dir)) => (Some(report), Some(dir)),
        None => (runs.last_full.clone(), runs.last_full_dir.clone()),
    };
    let s = report.as_ref().map(|r| r.summary).unwrap_or_default();
    let results = json!({
        "layer": layer,
        "framework": p.framework.name(),
        "iterations": finish.iterations,
        "passRate": round(finish.pass_rate),
        "coverage": coverage,
        "testsPassed": s.passed,
        "testsFailed": s.failed + s.error,
        "allPassed": report.as_ref().is_some_and(|r| r.all_passed()),
        "maxIterationsReached": finish.reason == StopReason::MaxIterations,
    });
    let patch = json!({"execution_results": {
        layer.clone(): results,
        "pass_rate": round(finish.pass_rate),
        "coverage": coverage,
    }});
    if let Err(e) = ctx.client().patch_memory(&patch, None).await {
        tracing::warn!("could not record execution_results.{layer}: {e}");
    }
    let summary = CycleSummary {
        task_id: task.id.clone(),
        title: format!("QA run ({layer})"),
        finish,
        history: cycle.history().to_vec(),
        report: report.clone(),
        run_dir,
        flaky: cycle.flaky().iter().cloned().collect(),
        vanished: runs.vanished.clone(),
        environment: cycle.environment().iter().cloned().collect(),
        max_iterations: limits.max_iterations,
        quality_gate: limits.quality_gate,
        tiers: None,
        gates: task.gates.clone(),
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
