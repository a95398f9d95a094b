//! How bold the next fix should be, from the pass-rate history and how the failures repeat.

use crate::cycles::config::TesterLimits;
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt;

/// The tester's fix strategy for one iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// One targeted fix for one failure (iterations 1–2, and whenever nothing else applies).
    Conservative,
    /// One batch fix for similar failures: the pass rate is high and the same tests keep failing.
    Aggressive,
    /// The pass rate dropped sharply: roll back the last fix, then one minimal fix.
    Surgical,
}

impl Strategy {
    /// The name used in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Conservative => "conservative",
            Strategy::Aggressive => "aggressive",
            Strategy::Surgical => "surgical",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the choice is made from.
#[derive(Debug, Clone, Copy)]
pub struct StrategyInput<'a> {
    /// The iteration about to fix (1-based).
    pub iteration: u32,
    /// Its pass rate.
    pub pass_rate: f64,
    /// The previous iteration's pass rate.
    pub previous_pass_rate: Option<f64>,
    /// Failing tests now.
    pub failures: &'a BTreeSet<String>,
    /// Failing tests in the previous iteration.
    pub previous_failures: Option<&'a BTreeSet<String>>,
}

/// Surgical after a drop of more than `surgical_drop` points (whatever the iteration);
/// conservative for the first `conservative_iterations`; aggressive when the pass rate is above
/// `aggressive_pass_rate` and the failures mostly repeat; conservative otherwise.
pub fn choose(limits: &TesterLimits, input: &StrategyInput<'_>) -> Strategy {
    if dropped(limits, input.previous_pass_rate, input.pass_rate) {
        return Strategy::Surgical;
    }
    if input.iteration <= limits.conservative_iterations {
        return Strategy::Conservative;
    }
    let repeating = input
        .previous_failures
        .is_some_and(|prev| mostly_repeat(prev, input.failures, limits.repeat_ratio));
    if input.pass_rate > limits.aggressive_pass_rate && repeating {
        Strategy::Aggressive
    } else {
        Strategy::Conservative
    }
}

/// Whether the pass rate fell by more than the surgical threshold.
pub fn dropped(limits: &TesterLimits, previous: Option<f64>, now: f64) -> bool {
    previous.is_some_and(|p| p - now > limits.surgical_drop)
}

/// Whether at least `ratio` of the current failures also failed before.
pub fn mostly_repeat(previous: &BTreeSet<String>, current: &BTreeSet<String>, ratio: f64) -> bool {
    if current.is_empty() {
        return false;
    }
    let repeated = current.intersection(previous).count();
    repeated as f64 >= ratio * current.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(ids: &[&str]) -> BTreeSet<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    fn pick(
        iteration: u32,
        now: f64,
        before: Option<f64>,
        cur: &[&str],
        prev: &[&str],
    ) -> Strategy {
        let (cur, prev) = (set(cur), set(prev));
        choose(
            &TesterLimits::default(),
            &StrategyInput {
                iteration,
                pass_rate: now,
                previous_pass_rate: before,
                failures: &cur,
                previous_failures: Some(&prev),
            },
        )
    }

    #[test]
    fn the_first_two_iterations_are_conservative() {
        assert_eq!(pick(1, 90.0, None, &["a"], &[]), Strategy::Conservative);
        assert_eq!(
            pick(2, 90.0, Some(89.0), &["a"], &["a"]),
            Strategy::Conservative
        );
    }

    #[test]
    fn high_pass_rates_with_repeating_failures_are_aggressive() {
        assert_eq!(
            pick(3, 85.0, Some(84.0), &["a", "b"], &["a", "b", "c"]),
            Strategy::Aggressive
        );
        assert_eq!(
            pick(3, 85.0, Some(84.0), &["x", "y"], &["a", "b"]),
            Strategy::Conservative
        );
        assert_eq!(
            pick(3, 70.0, Some(69.0), &["a"], &["a"]),
            Strategy::Conservative
        );
    }

    #[test]
    fn a_drop_of_more_than_ten_points_is_surgical_even_early() {
        assert_eq!(pick(2, 60.0, Some(80.0), &["a"], &[]), Strategy::Surgical);
        assert_eq!(
            pick(5, 70.0, Some(80.0), &["a"], &["a"]),
            Strategy::Conservative
        );
    }
}
