//! The loop both roles share: ask the pure cycle for a step, carry it out (run, re-check,
//! fix), feed the result back, post `impl_progress` per iteration, until it finishes.

use super::changes::change_fields;
use super::history::RunHistory;
use super::repair::Repairer;
use super::report::{round, Reporter};
use super::runs::Runs;
use super::RoleError;
use crate::cycles::executor::ExecutorCycle;
use crate::cycles::tester::TesterCycle;
use crate::cycles::{Finish, FixOutcome, Observed, Scope, Step};
use crate::worker::TaskContext;

/// The two cycles, seen alike.
pub(crate) trait Cycle {
    fn start(&mut self) -> Step;
    fn on_run(&mut self, scope: Scope, tests: &[Observed]) -> Step;
    fn on_recheck(&mut self, tests: &[Observed]) -> Step;
    fn on_fix(&mut self, outcome: FixOutcome) -> Step;
    fn max_iterations(&self) -> u32;
    /// What the team's test history knows to be flaky on the current tree.
    fn set_known_flaky(&mut self, _tests: Vec<String>) {}
}

impl Cycle for TesterCycle {
    fn start(&mut self) -> Step {
        TesterCycle::start(self)
    }
    fn on_run(&mut self, scope: Scope, tests: &[Observed]) -> Step {
        TesterCycle::on_run(self, scope, tests)
    }
    fn on_recheck(&mut self, tests: &[Observed]) -> Step {
        TesterCycle::on_recheck(self, tests)
    }
    fn on_fix(&mut self, outcome: FixOutcome) -> Step {
        TesterCycle::on_fix(self, outcome)
    }
    fn max_iterations(&self) -> u32 {
        self.limits().max_iterations
    }
    fn set_known_flaky(&mut self, tests: Vec<String>) {
        TesterCycle::set_known_flaky(self, tests)
    }
}

impl Cycle for ExecutorCycle {
    fn start(&mut self) -> Step {
        ExecutorCycle::start(self)
    }
    fn on_run(&mut self, _scope: Scope, tests: &[Observed]) -> Step {
        ExecutorCycle::on_run(self, tests)
    }
    fn on_recheck(&mut self, tests: &[Observed]) -> Step {
        ExecutorCycle::on_recheck(self, tests)
    }
    fn on_fix(&mut self, outcome: FixOutcome) -> Step {
        ExecutorCycle::on_fix(self, outcome)
    }
    fn max_iterations(&self) -> u32 {
        self.limits().max_iterations
    }
}

/// Why the loop did not reach a finish.
pub(crate) enum Interrupted {
    /// The lease was lost or the worker is stopping.
    Cancelled,
    /// The runner could not run.
    Role(RoleError),
}

/// Drives `cycle` to its finish. With a `history`, each full run is posted to the team's test
/// history and the tests it knows to be flaky on that tree go to the cycle.
pub(crate) async fn drive(
    cycle: &mut impl Cycle,
    runs: &mut Runs,
    repairer: &mut Repairer,
    reporter: &Reporter,
    ctx: &TaskContext,
    task_text: &str,
    mut history: Option<&mut RunHistory>,
) -> Result<Finish, Interrupted> {
    let max = cycle.max_iterations();
    let mut step = cycle.start();
    loop {
        if ctx.is_cancelled() {
            return Err(Interrupted::Cancelled);
        }
        step = match step {
            Step::Run(scope) => {
                if scope == Scope::Full {
                    reporter.full_run(None).await;
                }
                let (ran, tests) = runs.run(scope).await.map_err(Interrupted::Role)?;
                if ran == Scope::Full {
                    if scope != Scope::Full {
                        // An affected run that had to run everything; say so afterwards.
                        reporter.full_run(None).await;
                    }
                    reporter.full_run(runs.last_full.as_ref()).await;
                }
                if let (Scope::Full, Some(history), Some(report)) =
                    (ran, history.as_deref_mut(), runs.last_full.as_ref())
                {
                    cycle.set_known_flaky(
                        history
                            .record(&runs.project, report, runs.last_full_dir.as_deref())
                            .await,
                    );
                    if let Some(tiers) = runs.tiered.as_ref().and_then(|t| t.last_full.as_ref()) {
                        history.record_tiers(tiers).await;
                    }
                }
                cycle.on_run(ran, &tests)
            }
            Step::Recheck(ids) => {
                let tests = runs.recheck(&ids).await.map_err(Interrupted::Role)?;
                let asked: Vec<Observed> =
                    tests.into_iter().filter(|t| ids.contains(&t.id)).collect();
                for t in asked
                    .iter()
                    .filter(|t| t.verdict != crate::cycles::Verdict::Fail)
                {
                    tracing::info!("{} passed on a re-run: flaky, not sent for repair", t.id);
                }
                if let Some(history) = history.as_deref() {
                    history.report_reruns(reporter, &asked).await;
                }
                cycle.on_recheck(&asked)
            }
            Step::Fix(plan) => {
                tracing::info!(
                    "iteration {}/{max}: {:.1}% passing, {} fix for {}",
                    plan.iteration,
                    plan.pass_rate,
                    plan.strategy,
                    plan.targets.join(", ")
                );
                let outcome = tokio::select! {
                    o = repairer.attempt(&plan, runs, task_text) => o,
                    _ = ctx.cancelled() => return Err(Interrupted::Cancelled),
                };
                let note = outcome.describe();
                let change = match outcome {
                    FixOutcome::Applied => repairer.last_change.take(),
                    _ => None,
                };
                let next = cycle.on_fix(outcome);
                tracing::info!("iteration {}: {note}", plan.iteration);
                let targets = plan.targets.join(", ");
                let rollback = if plan.rollback_last {
                    "rolled back the last fix; "
                } else {
                    ""
                };
                reporter
                    .progress(
                        plan.iteration,
                        max,
                        round(plan.pass_rate),
                        plan.strategy.as_str(),
                        &format!("{rollback}{targets}: {note}"),
                        change
                            .map(|c| change_fields(&c.files, &c.diff))
                            .unwrap_or_default(),
                    )
                    .await;
                next
            }
            Step::Finish(f) => {
                tracing::info!(
                    "cycle finished after {} iteration(s): {:.1}% passing, gate {}",
                    f.iterations,
                    f.pass_rate,
                    if f.passed { "met" } else { "not met" }
                );
                return Ok(f);
            }
        };
    }
}
