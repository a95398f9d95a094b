//! The tester's cycle (`TEST-*`): iterate test → fix with a strategy per iteration, run the
//! affected tests after each fix, judge the quality gate on a full run, stop at the cap or on
//! convergence stagnation. Pure: see the [module docs](super) for the protocol.

use super::config::TesterLimits;
use super::ledger::{Ledger, Observed, Verdict};
use super::severity::classify;
use super::strategy::{choose, Strategy, StrategyInput};
use super::{Finish, FixOutcome, FixPlan, IterationRecord, Scope, Step, StopReason};
use std::collections::{BTreeMap, BTreeSet};

/// The tester's state machine. Call [`TesterCycle::start`], then feed back what each [`Step`]
/// produced until a [`Step::Finish`].
#[derive(Debug, Clone)]
pub struct TesterCycle {
    limits: TesterLimits,
    ledger: Ledger,
    /// The current iteration, 1-based.
    iteration: u32,
    history: Vec<IterationRecord>,
    /// Pass rate and failures at the previous fix decision (for drops and repeats).
    previous: Option<(f64, BTreeSet<String>)>,
    flaky: BTreeSet<String>,
    rechecked: BTreeSet<String>,
    /// Tests the team's test history saw pass and fail on the current tree: re-checked once
    /// before a repair even when `recheck_flaky` is off.
    known_flaky: BTreeSet<String>,
    /// Per targeted test: the signature it failed with and how many applied fixes left it so.
    stagnation: BTreeMap<String, (String, u32)>,
    /// Targets of the fix just applied, with their signatures before it.
    pending_targets: Vec<(String, String)>,
    /// Files changed since the last full run.
    dirty: bool,
    /// The ledger is exactly the last full run (no partial run or flaky re-check since).
    ledger_is_full_run: bool,
    /// The last applied fix can still be rolled back.
    can_roll_back: bool,
    /// A stop decided before a full run confirms or refutes it.
    verifying: Option<StopReason>,
    plan: Option<FixPlan>,
    /// `previous` as it was before the pending plan, restored when the plan is set aside.
    previous_before_plan: Option<(f64, BTreeSet<String>)>,
    /// Failures of a broken environment: still failing, never sent for repair.
    environment: BTreeSet<String>,
    /// What is broken, one line per set-aside batch.
    environment_reasons: Vec<String>,
}

impl TesterCycle {
    /// A cycle with these limits.
    pub fn new(limits: TesterLimits) -> TesterCycle {
        TesterCycle {
            limits,
            ledger: Ledger::default(),
            iteration: 0,
            history: Vec::new(),
            previous: None,
            flaky: BTreeSet::new(),
            rechecked: BTreeSet::new(),
            known_flaky: BTreeSet::new(),
            stagnation: BTreeMap::new(),
            pending_targets: Vec::new(),
            dirty: true,
            ledger_is_full_run: false,
            can_roll_back: false,
            verifying: None,
            plan: None,
            previous_before_plan: None,
            environment: BTreeSet::new(),
            environment_reasons: Vec::new(),
        }
    }

    /// Failures set aside as a broken environment.
    pub fn environment(&self) -> &BTreeSet<String> {
        &self.environment
    }

    /// The first step: a full run.
    pub fn start(&mut self) -> Step {
        self.iteration = 1;
        Step::Run(Scope::Full)
    }

    /// The limits in force.
    pub fn limits(&self) -> &TesterLimits {
        &self.limits
    }

    /// The iterations so far, with their strategies and notes.
    pub fn history(&self) -> &[IterationRecord] {
        &self.history
    }

    /// Tests whose re-run passed.
    pub fn flaky(&self) -> &BTreeSet<String> {
        &self.flaky
    }

    /// The tests the team's test history knows to be flaky on the current tree. A failure
    /// among them is re-run once before a fix is planned for it.
    pub fn set_known_flaky(&mut self, tests: impl IntoIterator<Item = String>) {
        self.known_flaky = tests.into_iter().collect();
    }

    /// The current iteration.
    pub fn iteration(&self) -> u32 {
        self.iteration
    }

    /// Tests the ledger says are failing, flaky ones excluded.
    pub fn failures(&self) -> BTreeSet<String> {
        &self.ledger.failing() - &self.flaky
    }

    /// A run of `scope` finished with these results.
    pub fn on_run(&mut self, scope: Scope, tests: &[Observed]) -> Step {
        if scope == Scope::Full {
            self.ledger.replace(tests);
            self.dirty = false;
            self.ledger_is_full_run = true;
        } else {
            self.ledger.update(tests);
            self.ledger_is_full_run = false;
        }
        for (id, before) in std::mem::take(&mut self.pending_targets) {
            match self.ledger.signature(&id) {
                Some(now) if now == before => {
                    self.stagnation.entry(id).or_insert((before, 0)).1 += 1
                }
                _ => {
                    self.stagnation.remove(&id);
                }
            }
        }
        if let Some(reason) = self.verifying.take() {
            if self.gate_met() {
                return self.conclude(StopReason::GateMet);
            }
            if reason != StopReason::GateMet {
                return self.conclude(reason);
            }
        }
        self.evaluate()
    }

    /// The flaky re-check finished: tests that passed are flaky.
    pub fn on_recheck(&mut self, tests: &[Observed]) -> Step {
        for t in tests {
            if t.verdict == Verdict::Fail {
                self.rechecked.insert(t.id.clone());
                self.ledger.update(std::slice::from_ref(t));
            } else {
                self.flaky.insert(t.id.clone());
                self.ledger.mark_passed(&t.id);
                self.ledger_is_full_run = false;
            }
        }
        // Tests the re-check did not report count as re-checked, so they are not asked again.
        let asked: Vec<String> = self.failures().into_iter().collect();
        self.rechecked.extend(asked);
        self.evaluate()
    }

    /// The fix attempt of the last [`Step::Fix`] ended with `outcome`.
    pub fn on_fix(&mut self, outcome: FixOutcome) -> Step {
        let Some(plan) = self.plan.take() else {
            return self.evaluate();
        };
        if plan.rollback_last {
            self.can_roll_back = false;
            self.dirty = true;
        }
        let note = outcome.describe();
        if let Some(last) = self.history.last_mut() {
            last.note = note;
        }
        match outcome {
            FixOutcome::Applied => {
                self.dirty = true;
                self.can_roll_back = true;
                self.pending_targets = plan
                    .targets
                    .iter()
                    .filter_map(|t| Some((t.clone(), self.ledger.signature(t)?.to_string())))
                    .collect();
                self.iteration += 1;
                Step::Run(Scope::Affected)
            }
            FixOutcome::NotApplied { .. } => {
                self.iteration += 1;
                if plan.rollback_last {
                    Step::Run(Scope::Affected)
                } else {
                    self.evaluate()
                }
            }
            FixOutcome::Unavailable { reason } => self.conclude(StopReason::Unavailable { reason }),
            FixOutcome::CannotFix { category, reason } => {
                self.conclude(StopReason::CannotFix { category, reason })
            }
            FixOutcome::Environment { tests, reason } => {
                // Nothing was tried: the iteration is planned again without these tests.
                self.history.pop();
                self.previous = self.previous_before_plan.take();
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
            return self.conclude(StopReason::NoTests);
        }
        if self.gate_met() {
            return self.conclude(StopReason::GateMet);
        }
        let failures = self.failures();
        if failures.is_empty() {
            return self.conclude(StopReason::OnlyFlaky);
        }
        let failures = &failures - &self.environment;
        if failures.is_empty() {
            return self.conclude(StopReason::CannotFix {
                category: "environment".into(),
                reason: self.environment_reasons.join("; "),
            });
        }
        let stuck: Vec<String> = self
            .stagnation
            .iter()
            .filter(|(id, (_, n))| *n >= self.limits.stagnation_attempts && failures.contains(*id))
            .map(|(id, _)| id.clone())
            .collect();
        if !stuck.is_empty() {
            return self.conclude(StopReason::Stagnation { tests: stuck });
        }
        if self.iteration >= self.limits.max_iterations {
            return self.conclude(StopReason::MaxIterations);
        }
        let unchecked: Vec<String> = failures
            .iter()
            .filter(|id| {
                (self.limits.recheck_flaky || self.known_flaky.contains(*id))
                    && !self.rechecked.contains(*id)
                    && !id.starts_with('[')
            })
            .cloned()
            .collect();
        if !unchecked.is_empty() {
            return Step::Recheck(unchecked);
        }
        self.decide_fix(failures)
    }

    fn decide_fix(&mut self, failures: BTreeSet<String>) -> Step {
        let pass_rate = self.ledger.pass_rate();
        let strategy = choose(
            &self.limits,
            &StrategyInput {
                iteration: self.iteration,
                pass_rate,
                previous_pass_rate: self.previous.as_ref().map(|p| p.0),
                failures: &failures,
                previous_failures: self.previous.as_ref().map(|p| &p.1),
            },
        );
        let mut ordered: Vec<String> = failures.iter().cloned().collect();
        ordered.sort_by_key(|id| (classify(id), id.clone()));
        let targets = match strategy {
            Strategy::Aggressive => self.similar_batch(&ordered),
            _ => ordered.into_iter().take(1).collect(),
        };
        let plan = FixPlan {
            iteration: self.iteration,
            strategy,
            targets,
            rollback_last: strategy == Strategy::Surgical && self.can_roll_back,
            pass_rate,
        };
        self.history.push(IterationRecord {
            iteration: self.iteration,
            pass_rate,
            strategy: Some(strategy),
            failing: failures.len(),
            note: String::new(),
        });
        self.previous_before_plan = self.previous.replace((pass_rate, failures));
        self.plan = Some(plan.clone());
        Step::Fix(plan)
    }

    /// The most severe failure and up to `batch_size - 1` others failing the same way (same
    /// signature) or in the same file.
    fn similar_batch(&self, ordered: &[String]) -> Vec<String> {
        let Some(first) = ordered.first() else {
            return Vec::new();
        };
        let sig = self.ledger.signature(first).unwrap_or_default();
        let file = first.split("::").next().unwrap_or(first);
        let mut batch = vec![first.clone()];
        for id in &ordered[1..] {
            if batch.len() >= self.limits.batch_size {
                break;
            }
            if self.ledger.signature(id) == Some(sig) || id.split("::").next() == Some(file) {
                batch.push(id.clone());
            }
        }
        batch
    }

    /// Stops with `reason`, after a full run when the ledger is not one.
    fn conclude(&mut self, reason: StopReason) -> Step {
        if self.dirty || !self.ledger_is_full_run {
            self.verifying = Some(reason);
            return Step::Run(Scope::Full);
        }
        let pass_rate = self.ledger.pass_rate();
        let passed = self.gate_met();
        if self.history.last().map(|h| h.iteration) != Some(self.iteration) {
            self.history.push(IterationRecord {
                iteration: self.iteration,
                pass_rate,
                strategy: None,
                failing: self.failures().len(),
                note: "final full run".into(),
            });
        }
        Step::Finish(Finish {
            passed,
            reason,
            iterations: self.iteration,
            pass_rate,
        })
    }
}
