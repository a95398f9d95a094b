//! The fix cycles as pure state machines, free of I/O: they are told what a test run, a flaky
//! re-check or a fix attempt produced and answer with the next [`Step`]. The I/O glue in
//! [`crate::roles`] runs the real test runner, asks the code-developer model and posts messages.
//!
//! - [`tester`]: `TEST-*` tasks — up to 10 iterations, quality gate 95 %, strategies
//!   conservative → aggressive → surgical ([`strategy`]), affected runs during the cycle and a
//!   full-suite run for the verdict, early stop on convergence stagnation.
//! - [`executor`]: `QARUN-*` tasks — up to 5 iterations, stops once the gate holds after at
//!   least two iterations.
//! - [`ledger`]: what is known about each test; the pass rate.
//! - [`baseline`]: the first full run's tests, so a later run cannot drop a failing one unseen.
//! - [`severity`]: critical / high / medium / low for remaining failures.
//! - [`config`]: every threshold and cap, with per-team and per-task overrides.
//!
//! An **iteration** is one look at the current state of the suite followed, when the cycle goes
//! on, by one fix attempt. A fix that changed files is followed by a test run, which opens the
//! next iteration; a refused or failed attempt changes nothing, so the next iteration starts
//! from the same results without running the tests again.
//!
//! [`Step`]: crate::cycles::Step
//! [`tester`]: crate::cycles::tester
//! [`strategy`]: crate::cycles::strategy
//! [`executor`]: crate::cycles::executor
//! [`ledger`]: crate::cycles::ledger
//! [`baseline`]: crate::cycles::baseline
//! [`severity`]: crate::cycles::severity
//! [`config`]: crate::cycles::config

pub mod baseline;
pub mod config;
pub mod executor;
pub mod ledger;
pub mod severity;
pub mod strategy;
pub mod tester;

pub use config::{CycleConfig, CycleConfigError, ExecutorLimits, TesterLimits};
pub use ledger::{Ledger, Observed, Verdict};
pub use severity::Severity;
pub use strategy::Strategy;

use serde::Serialize;

/// Which tests a run covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The whole suite (the layer's suite for the executor). Verdicts come only from these.
    Full,
    /// The tests affected by the files the last fix changed, plus the tests failing before it.
    Affected,
}

/// What the cycle wants done next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Run the tests in this scope, then call `on_run`.
    Run(Scope),
    /// Run these failing tests once more, then call `on_recheck`: a test that now passes is
    /// flaky and is not sent for repair.
    Recheck(Vec<String>),
    /// Ask for a fix, then call `on_fix`.
    Fix(FixPlan),
    /// The cycle is over.
    Finish(Finish),
}

/// One fix attempt the cycle asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct FixPlan {
    /// The iteration this attempt belongs to (1-based).
    pub iteration: u32,
    /// How bold the fix should be.
    pub strategy: Strategy,
    /// The failing tests to fix, most severe first.
    pub targets: Vec<String>,
    /// Restore the files the last applied fix changed before asking (surgical strategy).
    pub rollback_last: bool,
    /// The pass rate the decision was made on, 0–100.
    pub pass_rate: f64,
}

/// What came of a fix attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FixOutcome {
    /// Edits were applied: files changed.
    Applied,
    /// Nothing was applied (the reply was refused or the call failed); the reason goes back to
    /// the model at the next attempt. A rollback asked for by the plan still happened.
    NotApplied {
        /// Why, in words the model and the coordinator can act on.
        reason: String,
    },
    /// No fix can be had at all (no model configured, budget spent): stop.
    Unavailable {
        /// Why, naming the missing setting or the spent budget.
        reason: String,
    },
    /// The model says a test fix cannot solve this.
    CannotFix {
        /// `environment`, `architecture` or `other`.
        category: String,
        /// The model's explanation.
        reason: String,
    },
    /// These targets fail because the environment is broken (a missing module, a service that
    /// is not there): they are set aside and the cycle goes on with the other failures.
    Environment {
        /// The tests set aside.
        tests: Vec<String>,
        /// What is broken, per test.
        reason: String,
    },
}

impl FixOutcome {
    /// One line for logs, notes and messages.
    pub fn describe(&self) -> String {
        match self {
            FixOutcome::Applied => "fix applied".to_string(),
            FixOutcome::NotApplied { reason } => format!("no fix applied: {reason}"),
            FixOutcome::Unavailable { reason } => format!("no fix available: {reason}"),
            FixOutcome::CannotFix { category, reason } => {
                format!("cannot fix ({category}): {reason}")
            }
            FixOutcome::Environment { reason, .. } => {
                format!("set aside, not sent for repair: {reason}")
            }
        }
    }
}

/// Why a cycle stopped.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum StopReason {
    /// The quality gate holds on a full run.
    GateMet,
    /// The iteration cap was reached.
    MaxIterations,
    /// The same tests failed with the same assertion across the allowed number of fix attempts.
    Stagnation {
        /// The stagnating tests.
        tests: Vec<String>,
    },
    /// No fix could be had (see [`FixOutcome::Unavailable`]).
    Unavailable {
        /// Why.
        reason: String,
    },
    /// The model said a test fix cannot solve it.
    CannotFix {
        /// `environment`, `architecture` or `other`.
        category: String,
        /// The model's explanation.
        reason: String,
    },
    /// The only failures left are flaky tests, which are not sent for repair.
    OnlyFlaky,
    /// The run found no test at all.
    NoTests,
    /// The gate held in the checkout, but not when the original tests (and the task's
    /// acceptance tests) were re-run in a clean copy.
    NotVerified {
        /// What the re-run showed, one line each.
        problems: Vec<String>,
    },
}

/// How a cycle ended. `passed` is always judged on a full run.
#[derive(Debug, Clone, PartialEq)]
pub struct Finish {
    /// The quality gate holds on the final full run.
    pub passed: bool,
    /// Why the cycle stopped.
    pub reason: StopReason,
    /// Iterations made.
    pub iterations: u32,
    /// Pass rate of the final full run, 0–100.
    pub pass_rate: f64,
}

/// One iteration as it is reported (`impl_progress`, the strategy history).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IterationRecord {
    /// 1-based.
    pub iteration: u32,
    /// Pass rate the iteration started from.
    pub pass_rate: f64,
    /// The strategy of its fix attempt, if one was made.
    pub strategy: Option<Strategy>,
    /// Failing tests (flaky ones excluded) at the start of the iteration.
    pub failing: usize,
    /// What happened to the fix attempt.
    pub note: String,
}

#[cfg(test)]
mod tests;
