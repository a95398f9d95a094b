//! The cycles' invariants, pinned with property tests over random worlds: random run results,
//! random flaky re-checks and random fix outcomes.

use super::executor::ExecutorCycle;
use super::ledger::{pass_rate, Observed, Verdict};
use super::strategy::Strategy as FixStrategy;
use super::tester::TesterCycle;
use super::{ExecutorLimits, FixOutcome, Scope, Step, StopReason, TesterLimits};
use proptest::prelude::*;

/// A random world: per call, a verdict code and a signature code per test, and a fix code.
#[derive(Debug, Clone)]
struct World {
    tests: usize,
    rolls: Vec<u8>,
    at: usize,
}

impl World {
    fn roll(&mut self) -> u8 {
        let r = self.rolls[self.at % self.rolls.len()];
        self.at += 1;
        r
    }

    fn observe(&mut self, ids: &[String]) -> Vec<Observed> {
        ids.iter()
            .map(|id| {
                let r = self.roll();
                let verdict = match r % 8 {
                    0..=3 => Verdict::Pass,
                    4..=6 => Verdict::Fail,
                    _ => Verdict::Skip,
                };
                Observed::new(id.clone(), verdict, &format!("assert {}", r % 2))
            })
            .collect()
    }

    fn all(&self) -> Vec<String> {
        (0..self.tests).map(|i| format!("t{i}")).collect()
    }

    fn fix(&mut self) -> FixOutcome {
        match self.roll() % 10 {
            0..=5 => FixOutcome::Applied,
            6..=8 => FixOutcome::NotApplied {
                reason: "refused".into(),
            },
            _ => FixOutcome::Unavailable {
                reason: "budget".into(),
            },
        }
    }
}

fn world() -> impl Strategy<Value = World> {
    (1usize..8, prop::collection::vec(any::<u8>(), 1..200)).prop_map(|(tests, rolls)| World {
        tests,
        rolls,
        at: 0,
    })
}

fn verdicts(tests: &[Observed]) -> Vec<Verdict> {
    tests.iter().map(|t| t.verdict).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn tester_respects_the_cap_the_drop_rule_and_judges_on_a_full_run(
        mut w in world(), max in 1u32..12, gate in 50.0f64..100.0
    ) {
        let limits = TesterLimits { max_iterations: max, quality_gate: gate, ..TesterLimits::default() };
        let drop = limits.surgical_drop;
        let mut cycle = TesterCycle::new(limits);
        let mut step = cycle.start();
        let (mut fixes, mut last_full, mut last_plan_rate) = (0u32, None::<f64>, None::<f64>);
        for _ in 0..2000 {
            prop_assert!(cycle.iteration() <= max, "iteration {} past the cap {max}", cycle.iteration());
            step = match step {
                Step::Run(scope) => {
                    let results = w.observe(&w.all());
                    if scope == Scope::Full {
                        last_full = Some(pass_rate(verdicts(&results)));
                    }
                    cycle.on_run(scope, &results)
                }
                Step::Recheck(ids) => {
                    let results = w.observe(&ids);
                    cycle.on_recheck(&results)
                }
                Step::Fix(plan) => {
                    fixes += 1;
                    if let Some(before) = last_plan_rate {
                        let dropped = before - plan.pass_rate > drop;
                        prop_assert_eq!(dropped, plan.strategy == FixStrategy::Surgical,
                            "drop {} → {}: {:?}", before, plan.pass_rate, plan.strategy);
                    }
                    prop_assert!(!plan.rollback_last || plan.strategy == FixStrategy::Surgical);
                    prop_assert!(!plan.targets.is_empty());
                    last_plan_rate = Some(plan.pass_rate);
                    cycle.on_fix(w.fix())
                }
                Step::Finish(f) => {
                    prop_assert!(f.iterations <= max);
                    prop_assert!(fixes < max, "{fixes} fixes with a cap of {max}");
                    let full = last_full.expect("a verdict needs a full run");
                    prop_assert!((f.pass_rate - full).abs() < 1e-9, "verdict {} but full run {}", f.pass_rate, full);
                    prop_assert_eq!(f.passed, full >= gate);
                    if f.reason == StopReason::GateMet { prop_assert!(f.passed); }
                    return Ok(());
                }
            };
        }
        prop_assert!(false, "the cycle did not finish");
    }

    #[test]
    fn executor_never_continues_past_a_satisfied_gate(
        mut w in world(), max in 1u32..8, min in 1u32..4, gate in 50.0f64..100.0
    ) {
        let limits = ExecutorLimits { max_iterations: max, min_iterations: min, quality_gate: gate, ..ExecutorLimits::default() };
        let mut cycle = ExecutorCycle::new(limits);
        let mut step = cycle.start();
        let mut iteration = 1u32;
        let mut last_full = None::<f64>;
        for _ in 0..2000 {
            step = match step {
                Step::Run(scope) => {
                    prop_assert_eq!(scope, Scope::Full);
                    let results = w.observe(&w.all());
                    let rate = pass_rate(verdicts(&results));
                    last_full = Some(rate);
                    let next = cycle.on_run(&results);
                    let ran = results.iter().any(|t| t.verdict != Verdict::Skip);
                    if ran && rate >= gate && iteration >= min {
                        prop_assert!(matches!(next, Step::Finish(_)), "went on past the gate: {:?}", next);
                    }
                    next
                }
                Step::Recheck(ids) => {
                    let results = w.observe(&ids);
                    cycle.on_recheck(&results)
                }
                Step::Fix(plan) => {
                    prop_assert!(plan.iteration < max);
                    let outcome = w.fix();
                    if !matches!(outcome, FixOutcome::Unavailable { .. }) {
                        iteration += 1;
                    }
                    cycle.on_fix(outcome)
                }
                Step::Finish(f) => {
                    prop_assert!(f.iterations <= max);
                    let full = last_full.expect("a verdict needs a full run");
                    prop_assert_eq!(f.passed, full >= gate && f.reason != StopReason::NoTests);
                    return Ok(());
                }
            };
        }
        prop_assert!(false, "the cycle did not finish");
    }
}

fn obs(id: &str, pass: bool, sig: &str) -> Observed {
    let v = if pass { Verdict::Pass } else { Verdict::Fail };
    Observed::new(id, v, sig)
}

#[test]
fn the_same_assertion_across_two_fix_attempts_stops_the_cycle() {
    let mut c = TesterCycle::new(TesterLimits::default());
    assert_eq!(c.start(), Step::Run(Scope::Full));
    let failing = [obs("a", false, "E assert 1 == 2"), obs("b", true, "")];
    assert_eq!(
        c.on_run(Scope::Full, &failing),
        Step::Recheck(vec!["a".into()])
    );
    let Step::Fix(plan) = c.on_recheck(&failing[..1]) else {
        panic!("fix expected")
    };
    assert_eq!(plan.targets, vec!["a".to_string()]);
    assert_eq!(c.on_fix(FixOutcome::Applied), Step::Run(Scope::Affected));
    assert!(matches!(
        c.on_run(Scope::Affected, &failing[..1]),
        Step::Fix(_)
    ));
    assert_eq!(c.on_fix(FixOutcome::Applied), Step::Run(Scope::Affected));
    assert_eq!(
        c.on_run(Scope::Affected, &failing[..1]),
        Step::Run(Scope::Full)
    );
    let Step::Finish(f) = c.on_run(Scope::Full, &failing) else {
        panic!("finish expected")
    };
    assert_eq!(
        f.reason,
        StopReason::Stagnation {
            tests: vec!["a".into()]
        }
    );
    assert!(!f.passed);
}

#[test]
fn a_flaky_test_is_not_sent_for_repair() {
    let mut c = TesterCycle::new(TesterLimits::default());
    c.start();
    let run = [obs("a", false, "boom"), obs("b", true, "")];
    assert_eq!(c.on_run(Scope::Full, &run), Step::Recheck(vec!["a".into()]));
    // It passes on the re-run: flaky; the verdict still needs a fresh full run.
    assert_eq!(c.on_recheck(&[obs("a", true, "")]), Step::Run(Scope::Full));
    let Step::Finish(f) = c.on_run(Scope::Full, &[obs("a", true, ""), obs("b", true, "")]) else {
        panic!("finish expected")
    };
    assert!(f.passed);
    assert!(c.flaky().contains("a"));
}

#[test]
fn a_failure_known_flaky_from_the_history_is_rerun_even_with_rechecks_off() {
    let mut c = TesterCycle::new(TesterLimits {
        recheck_flaky: false,
        ..TesterLimits::default()
    });
    c.start();
    c.set_known_flaky(["coin".to_string()]);
    let run = [
        obs("coin", false, "x"),
        obs("real", false, "y"),
        obs("ok", true, ""),
    ];
    // Only the known-flaky failure is re-run; the other goes to a fix after it.
    assert_eq!(
        c.on_run(Scope::Full, &run),
        Step::Recheck(vec!["coin".into()])
    );
    let Step::Fix(plan) = c.on_recheck(&[obs("coin", true, "")]) else {
        panic!("a fix for the real failure")
    };
    assert_eq!(plan.targets, ["real"]);
    assert!(c.flaky().contains("coin"));
}

#[test]
fn a_drop_rolls_back_the_last_fix() {
    let mut c = TesterCycle::new(TesterLimits {
        recheck_flaky: false,
        ..TesterLimits::default()
    });
    c.start();
    let ids: Vec<String> = (0..10).map(|i| format!("t{i}")).collect();
    let run = |failing: usize| -> Vec<Observed> {
        ids.iter()
            .enumerate()
            .map(|(i, id)| obs(id, i >= failing, "x"))
            .collect()
    };
    assert!(matches!(c.on_run(Scope::Full, &run(2)), Step::Fix(_)));
    c.on_fix(FixOutcome::Applied);
    let Step::Fix(plan) = c.on_run(Scope::Affected, &run(5)) else {
        panic!()
    };
    assert_eq!(plan.strategy, FixStrategy::Surgical);
    assert!(plan.rollback_last);
}

#[test]
fn the_executor_stops_at_the_gate_only_after_two_iterations() {
    let limits = ExecutorLimits {
        recheck_flaky: false,
        ..ExecutorLimits::default()
    };
    let mut c = ExecutorCycle::new(limits);
    c.start();
    let mut run: Vec<Observed> = (0..40).map(|i| obs(&format!("t{i}"), true, "")).collect();
    run[0] = obs("t0", false, "x");
    assert!(
        matches!(c.on_run(&run), Step::Fix(_)),
        "iteration 1 goes on"
    );
    assert_eq!(c.on_fix(FixOutcome::Applied), Step::Run(Scope::Full));
    let Step::Finish(f) = c.on_run(&run) else {
        panic!("gate met at iteration 2")
    };
    assert!(f.passed);
    assert_eq!(f.iterations, 2);
}

#[test]
fn an_environment_failure_is_set_aside_and_the_others_are_still_repaired() {
    let limits = TesterLimits {
        recheck_flaky: false,
        ..TesterLimits::default()
    };
    let mut c = TesterCycle::new(limits);
    c.start();
    let first = [
        obs("broken.py", false, "ModuleNotFoundError"),
        obs("t.py::a", false, "E assert 1 == 2"),
        obs("t.py::b", true, ""),
    ];
    let Step::Fix(plan) = c.on_run(Scope::Full, &first) else {
        panic!("fix expected")
    };
    assert_eq!(plan.targets, vec!["broken.py".to_string()]);
    let Step::Fix(plan) = c.on_fix(FixOutcome::Environment {
        tests: vec!["broken.py".into()],
        reason: "broken.py: No module named x".into(),
    }) else {
        panic!("the other failure is tried")
    };
    assert_eq!(
        (plan.iteration, plan.targets),
        (1, vec!["t.py::a".to_string()])
    );
    assert_eq!(c.history().len(), 1, "one record for iteration 1");
    assert_eq!(c.on_fix(FixOutcome::Applied), Step::Run(Scope::Affected));
    let fixed = [obs("t.py::a", true, "")];
    assert_eq!(c.on_run(Scope::Affected, &fixed), Step::Run(Scope::Full));
    let last = [first[0].clone(), fixed[0].clone(), first[2].clone()];
    let Step::Finish(f) = c.on_run(Scope::Full, &last) else {
        panic!("finish expected")
    };
    assert!(!f.passed);
    assert_eq!(
        f.reason,
        StopReason::CannotFix {
            category: "environment".into(),
            reason: "broken.py: No module named x".into()
        }
    );
}
