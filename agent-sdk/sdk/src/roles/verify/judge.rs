//! What the verdict re-run must show, against where the task began: the quality gate on this
//! run, every test the task targets passing (fail-to-pass), no test that passed in the first
//! run failing or gone (pass-to-pass), every acceptance test passing, and the copy unwritten.

use crate::cycles::Verdict;
use crate::runners::{Outcome, Report, TestResult};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Most ids listed per check (counts are always whole).
const MAX_IDS: usize = 50;

/// The verdict re-run's findings.
#[derive(Debug, Clone, Default)]
pub(crate) struct Judgement {
    /// Why the run does not meet the gate; empty when it does.
    pub problems: Vec<String>,
    /// The findings as reported (`verification` in `test_result` and the task's result).
    pub json: Value,
}

/// What the run is judged against.
pub(crate) struct Expected<'a> {
    /// The pass rate to reach.
    pub gate: f64,
    /// The tests the task targets: node ids, or files meaning every test in them.
    pub targets: &'a [String],
    /// The first full run's verdict per test.
    pub first_run: &'a BTreeMap<String, Verdict>,
    /// The acceptance test files written into the copy.
    pub acceptance: &'a [String],
    /// Project files the run added, removed or changed.
    pub written: &'a [String],
    /// The ids the checkout's last full run reported: a test of unknown file that is not
    /// among them came with the acceptance files (go reports no file for a passing test).
    pub checkout: &'a BTreeSet<String>,
}

/// The test's file: the report's, else the id's part before `::`.
fn file_of(t: &TestResult) -> &str {
    t.file
        .as_deref()
        .unwrap_or_else(|| t.nodeid.split("::").next().unwrap_or(&t.nodeid))
}

fn of_target<'r>(report: &'r Report, target: &str) -> Vec<&'r TestResult> {
    report
        .tests
        .iter()
        .filter(|t| {
            t.nodeid == target
                || t.nodeid
                    .strip_prefix(target)
                    .is_some_and(|rest| rest.starts_with("::"))
                || file_of(t) == target
        })
        .collect()
}

fn listed(ids: &[String]) -> &[String] {
    &ids[..ids.len().min(MAX_IDS)]
}

/// Judges `report` against `expected`.
pub(crate) fn judge(report: &Report, expected: &Expected<'_>) -> Judgement {
    let mut problems = Vec::new();
    let rate = report.pass_rate();
    if report.timed_out {
        problems.push("the verdict re-run timed out".to_string());
    }
    if rate < expected.gate {
        problems.push(format!(
            "{rate:.1}% of the original tests pass in a clean copy, below the gate of {}%",
            expected.gate
        ));
    }
    let mut still_failing = Vec::new();
    for target in expected.targets {
        let tests = of_target(report, target);
        if tests.is_empty() {
            still_failing.push(format!("{target} (not run)"));
        }
        still_failing.extend(
            tests
                .iter()
                .filter(|t| t.outcome != Outcome::Passed)
                .map(|t| t.nodeid.clone()),
        );
    }
    if !still_failing.is_empty() {
        problems.push(format!(
            "the task's targets do not pass in a clean copy: {}",
            listed(&still_failing).join(", ")
        ));
    }
    let outcomes: BTreeMap<&str, Outcome> = report
        .tests
        .iter()
        .map(|t| (t.nodeid.as_str(), t.outcome))
        .collect();
    let broken: Vec<String> = expected
        .first_run
        .iter()
        .filter(|(_, v)| **v == Verdict::Pass)
        .filter(|(id, _)| {
            !matches!(
                outcomes.get(id.as_str()),
                Some(Outcome::Passed | Outcome::Skipped)
            )
        })
        .map(|(id, _)| id.clone())
        .collect();
    if !broken.is_empty() {
        problems.push(format!(
            "{} test(s) that passed when the task began fail or are gone in a clean copy: {}",
            broken.len(),
            listed(&broken).join(", ")
        ));
    }
    let acceptance = (!expected.acceptance.is_empty()).then(|| {
        let tests: Vec<&TestResult> = report
            .tests
            .iter()
            .filter(|t| {
                expected.acceptance.iter().any(|f| file_of(t) == f)
                    || (t.file.is_none()
                        && !t.nodeid.starts_with('[')
                        && !expected.checkout.contains(&t.nodeid))
            })
            .collect();
        let failed: Vec<String> = tests
            .iter()
            .filter(|t| t.outcome != Outcome::Passed)
            .map(|t| t.nodeid.clone())
            .collect();
        if tests.is_empty() {
            problems.push("no acceptance test ran".to_string());
        } else if !failed.is_empty() {
            problems.push(format!(
                "{} of {} acceptance test(s) fail",
                failed.len(),
                tests.len()
            ));
        }
        json!({
            "files": expected.acceptance.len(),
            "passed": tests.len() - failed.len(),
            "failed": failed.len(),
            "ids": listed(&failed),
        })
    });
    if !expected.written.is_empty() {
        problems.push(format!(
            "the verdict re-run wrote project files: {}",
            listed(expected.written).join(", ")
        ));
    }
    let s = report.summary;
    let json = json!({
        "passRate": (rate * 10.0).round() / 10.0,
        "gate": expected.gate,
        "counts": {"total": s.total, "passed": s.passed, "failed": s.failed, "errors": s.error, "skipped": s.skipped},
        "failToPass": {"targets": expected.targets, "notPassing": listed(&still_failing)},
        "passToPass": {"passedAtStart": expected.first_run.values().filter(|v| **v == Verdict::Pass).count(), "broken": broken.len(), "ids": listed(&broken)},
        "acceptance": acceptance,
        "treeWritten": listed(expected.written),
        "problems": problems,
    });
    Judgement { problems, json }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runners::{Framework, Summary};

    fn report(tests: &[(&str, Outcome)]) -> Report {
        let tests: Vec<TestResult> = tests
            .iter()
            .map(|(id, o)| TestResult::new(*id, *o))
            .collect();
        Report {
            created: 0.0,
            duration: 0.0,
            exitcode: 1,
            root: String::new(),
            framework: Framework::Pytest,
            summary: Summary::of(&tests),
            tests,
            timed_out: false,
            command: Vec::new(),
            coverage: None,
            artifacts: Vec::new(),
            flaky: Vec::new(),
            flaky_in_run: 0,
        }
    }

    #[test]
    fn each_check_names_what_fails() {
        let first: BTreeMap<String, Verdict> = [
            ("tests/test_a.py::test_ok".to_string(), Verdict::Pass),
            ("tests/test_a.py::test_bug".to_string(), Verdict::Fail),
        ]
        .into();
        let targets = vec!["tests/test_a.py::test_bug".to_string()];
        let acceptance = vec!["tests/test_hidden.py".to_string()];
        let expected = Expected {
            gate: 95.0,
            targets: &targets,
            first_run: &first,
            acceptance: &acceptance,
            written: &[],
            checkout: &first.keys().cloned().collect(),
        };
        let honest = report(&[
            ("tests/test_a.py::test_ok", Outcome::Passed),
            ("tests/test_a.py::test_bug", Outcome::Passed),
            ("tests/test_hidden.py::test_other_input", Outcome::Passed),
        ]);
        let j = judge(&honest, &expected);
        assert!(j.problems.is_empty(), "{:?}", j.problems);
        assert_eq!(j.json["acceptance"]["passed"], 1);

        // A hard-coded answer: the visible tests pass, the hidden one does not.
        let hard_coded = report(&[
            ("tests/test_a.py::test_ok", Outcome::Passed),
            ("tests/test_a.py::test_bug", Outcome::Passed),
            ("tests/test_hidden.py::test_other_input", Outcome::Failed),
        ]);
        let j = judge(&hard_coded, &expected);
        assert!(
            j.problems.iter().any(|p| p.contains("acceptance")),
            "{:?}",
            j.problems
        );
        assert_eq!(
            j.json["acceptance"]["ids"][0],
            "tests/test_hidden.py::test_other_input"
        );

        // The target still failing; an originally passing test gone.
        let worse = report(&[
            ("tests/test_a.py::test_bug", Outcome::Failed),
            ("tests/test_hidden.py::test_other_input", Outcome::Passed),
        ]);
        let j = judge(&worse, &expected);
        assert!(
            j.problems.iter().any(|p| p.contains("targets")),
            "{:?}",
            j.problems
        );
        assert!(j
            .problems
            .iter()
            .any(|p| p.contains("passed when the task began")));
        assert!(j.problems.iter().any(|p| p.contains("below the gate")));
    }
}
