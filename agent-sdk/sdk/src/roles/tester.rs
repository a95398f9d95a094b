//! The tester role (`TEST-*`): the [`TesterCycle`] over the project's real test suite, fixes
//! anywhere the guardrails allow, `test_result` at the end and `fix_required` when a test fix
//! cannot solve it.

use super::drive::drive;
use super::history::RunHistory;
use super::repair::Repairer;
use super::report::{round, stop_text, CycleSummary};
use super::runs::Runs;
use super::settings::RoleSettings;
use super::setup::{interrupted, prepare, report_failure, task_cycle, task_scope};
use super::RoleError;
use crate::cycles::tester::TesterCycle;
use crate::cycles::{Finish, StopReason};
use crate::edits::Policy;
use crate::runners::Selection;
use crate::wire::Task;
use crate::worker::{Handler, HandlerResult, TaskContext};
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
    let timeout = Duration::from_secs(limits.run_timeout_secs);
    let mut runs = Runs::new(
        &settings.project,
        p.framework,
        timeout,
        Selection::All,
        false,
    );
    let policy = Policy {
        scope: task_scope(task),
        ..Policy::tester()
    };
    let mut repairer = Repairer::new(settings.llm.clone(), settings.llm_missing.clone(), policy);
    let mut cycle = TesterCycle::new(limits.clone());
    let mut history = RunHistory::new(ctx.client().clone(), &settings.project);
    let finish = match drive(
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
    let summary = CycleSummary {
        task_id: task.id.clone(),
        title: "Test cycle".into(),
        finish: finish.clone(),
        history: cycle.history().to_vec(),
        report: runs.last_full.clone(),
        flaky: cycle.flaky().iter().cloned().collect(),
        max_iterations: limits.max_iterations,
        quality_gate: limits.quality_gate,
    };
    conclude(&summary, &p.reporter, &repairer).await
}

/// Posts `error` when the model could not be used at all, or `fix_required` when the stop
/// calls for it; then `test_result`. Completes the task when the gate holds, else fails it with
/// the reason.
pub(crate) async fn conclude(
    summary: &CycleSummary,
    reporter: &super::Reporter,
    repairer: &Repairer,
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
            "other",
            format!("{} failing test(s) could not be repaired", failing.len()),
        )),
        _ => None,
    };
    if let Some(failure) = &repairer.model_failure {
        reporter.error("model_unreachable", failure, "llm").await;
    } else if let Some((reason, tests, category, details)) = required {
        reporter
            .fix_required(&reason, &tests, category, &details)
            .await;
    }
    let mut data = summary.test_result();
    data["modelCalls"] = model_use.0.into();
    data["modelTokens"] = model_use.1.into();
    // The task's result is stored too: no secret in it, as in the message.
    crate::runners::scrub::scrub_json_value(&mut data);
    let counts = format!("{}/{} passed", data["passed"], data["total"]);
    let text = format!(
        "{}: {:.1}% ({counts}) after {} iteration(s), gate {}",
        summary.task_id,
        round(f.pass_rate),
        f.iterations,
        if f.passed { "met" } else { "not met" }
    );
    reporter.post("test_result", text, data.clone()).await;
    if f.passed {
        data.as_object_mut().map(|o| o.remove("summary"));
        Ok(data)
    } else {
        // A verdict, not an accident: another try would run the same cycle on the same code.
        Err(crate::worker::FinalFailure::new(format!(
            "quality gate not met: {}",
            stop_text(f, summary.quality_gate)
        ))
        .into())
    }
}
