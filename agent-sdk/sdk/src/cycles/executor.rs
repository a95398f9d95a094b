//! The executor's cycle (`QARUN-*`): run the layer's suite, fix failing tests (test files
//! only — the glue enforces it), and go on while failures remain, unless the pass rate reaches
//! the gate after at least `min_iterations`; at most `max_iterations`. Pure: see the
//! [module docs](super) for the protocol.

use super::config::ExecutorLimits;
use super::ledger::{Ledger, Observed, Verdict};
use super::severity::classify;
use super::strategy::Strategy;
use super::{Finish, FixOutcome, FixPlan, IterationRecord, Scope, Step, StopReason};
use std::collections::BTreeSet;

/// Most failing tests sent in one executor fix.
const BATCH: usize = 10;

/// The executor's state machine. Every run is of the layer's whole suite.
#[derive(Debug, Clone)]
pub struct ExecutorCycle {
    limits: ExecutorLimits,
    ledger: Ledger,
    iteration: u32,
    history: Vec<IterationRecord>,
    flaky: BTreeSet<String>,
    rechecked: BTreeSet<String>,
    /// The ledger is exactly the last full run.
    ledger_is_full_run: bool,
    plan: Option<FixPlan>,
    /// Failures of a broken environment: still failing, never sent for repair.
    environment: BTreeSet<String>,
    /// What is broken, one line per set-aside batch.
    environment_reasons: Vec<String>,
}

impl ExecutorCycle {
    /// A cycle with these limits.
    pub fn new(limits: ExecutorLimits) -> ExecutorCycle {
        ExecutorCycle {
            limits,
            ledger: Ledger::default(),
            iteration: 0,
            history: Vec::new(),
            flaky: BTreeSet::new(),
            rechecked: BTreeSet::new(),
            ledger_is_full_run: false,
            plan: None,
            environment: BTreeSet::new(),
            environment_reasons: Vec::new(),
        }
    }

    /// Failures set aside as a broken environment.
    pub fn environment(&self) -> &BTreeSet<String> {
        &self.environment
    }

    /// The first step: a run of the suite.
    pub fn start(&mut self) -> Step {
        self.iteration = 1;
        Step::Run(Scope::Full)
    }

    /// The limits in force.
    pub fn limits(&self) -> &ExecutorLimits {
        &self.limits
    }

    /// The iterations so far.
    pub fn history(&self) -> &[IterationRecord] {
        &self.history
    }

    /// Tests whose re-run passed.
    pub fn flaky(&self) -> &BTreeSet<String> {
        &self.flaky
    }

    /// Failing tests, flaky ones excluded.
    pub fn failures(&self) -> BTreeSet<String> {
        &self.ledger.failing() - &self.flaky
    }

    /// A run of the suite finished.
    pub fn on_run(&mut self, tests: &[Observed]) -> Step {
        self.ledger.replace(tests);
        self.ledger_is_full_run = true;
        self.evaluate()
    }

    /// The flaky re-check finished.
    pub fn on_recheck(&mut self, tests: &[Observed]) -> Step {
        for t in tests {
            if t.verdict == Verdict::Fail {
                self.ledger.update(std::slice::from_ref(t));
            } else {
                self.flaky.insert(t.id.clone());
                self.ledger.mark_passed(&t.id);
                self.ledger_is_full_run = false;
            }
        }
        let asked: Vec<String> = self.failures().into_iter().collect();
        self.rechecked.extend(asked);
        self.evaluate()
    }

    /// The fix attempt of the last [`Step::Fix`] ended with `outcome`.
    pub fn on_fix(&mut self, outcome: FixOutcome) -> Step {
        if self.plan.take().is_none() {
            return self.evaluate();
        }
        if let Some(last) = self.history.last_mut() {
            last.note = outcome.describe();
        }
        match outcome {
            FixOutcome::Applied => {
                self.iteration += 1;
                Step::Run(Scope::Full)
            }
            FixOutcome::NotApplied { .. } => {
                self.iteration += 1;
                self.evaluate()
            }
            FixOutcome::Unavailable { reason } => self.finish(StopReason::Unavailable { reason }),
            FixOutcome::CannotFix { category, reason } => {
                self.finish(StopReason::CannotFix { category, reason })
            }
            FixOutcome::Environment { tests, reason } => {
                // Nothing was tried: the iteration is planned again without these tests.
                self.history.pop();
                self.environment.extend(tests);
                self.environment_reasons.push(reason);
                self.evaluate()
            }
        }
    }

    fn gate_met(&self) -> bool {
        !self.ledger.is_empty() && self.ledger.pass_rate() >= self.limits.quality_gate
    }

    fn evaluate(&mut self) -> Step {
        if self.ledger.is_empty() {
            return self.finish(StopReason::NoTests);
        }
        let failures = self.failures();
        if failures.is_empty() {
            let reason = if self.gate_met() {
                StopReason::GateMet
            } else {
                StopReason::OnlyFlaky
            };
            return self.finish(reason);
        }
        if self.gate_met() && self.iteration >= self.limits.min_iterations {
            return self.finish(StopReason::GateMet);
        }
        let failures = &failures - &self.environment;
        if failures.is_empty() {
            return self.finish(StopReason::CannotFix {
                category: "environment".into(),
                reason: self.environment_reasons.join("; "),
            });
        }
        if self.iteration >= self.limits.max_iterations {
            return self.finish(StopReason::MaxIterations);
        }
        if self.limits.recheck_flaky {
            let unchecked: Vec<String> = failures
                .iter()
                .filter(|id| !self.rechecked.contains(*id) && !id.starts_with('['))
                .cloned()
                .collect();
            if !unchecked.is_empty() {
                return Step::Recheck(unchecked);
            }
        }
        let pass_rate = self.ledger.pass_rate();
        let mut targets: Vec<String> = failures.iter().cloned().collect();
        targets.sort_by_key(|id| (classify(id), id.clone()));
        targets.truncate(BATCH);
        let plan = FixPlan {
            iteration: self.iteration,
            strategy: Strategy::Conservative,
            targets,
            rollback_last: false,
            pass_rate,
        };
        self.history.push(IterationRecord {
            iteration: self.iteration,
            pass_rate,
            strategy: Some(Strategy::Conservative),
            failing: failures.len(),
            note: String::new(),
        });
        self.plan = Some(plan.clone());
        Step::Fix(plan)
    }

    /// Stops with `reason` once the ledger is a full run; when flaky re-checks changed it, the
    /// suite runs again and the decision is made anew on that run.
    fn finish(&mut self, reason: StopReason) -> Step {
        if !self.ledger_is_full_run {
            return Step::Run(Scope::Full);
        }
        let pass_rate = self.ledger.pass_rate();
        let passed = self.gate_met();
        let reason = if passed && reason == StopReason::OnlyFlaky {
            StopReason::GateMet
        } else {
            reason
        };
        if self.history.last().map(|h| h.iteration) != Some(self.iteration) {
            self.history.push(IterationRecord {
                iteration: self.iteration,
                pass_rate,
                strategy: None,
                failing: self.failures().len(),
                note: "final run".into(),
            });
        }
        Step::Finish(Finish {
            passed,
            reason,
            iterations: self.iteration,
            pass_rate,
        })
    }

    /// Whether the last finished cycle stopped because of the cap.
    pub fn max_iterations_reached(finish: &Finish) -> bool {
        finish.reason == StopReason::MaxIterations
    }
}
