//! The suite cannot shrink unnoticed: the first full run fixes which tests exist, and a later
//! full run that no longer reports a test that failed at some point in the cycle — renamed,
//! deselected, skipped, no longer collected — counts that test as failed. A test file whose
//! tests are all gone counts every one of them as failed. Pure: ids in, ids out.

use super::ledger::{Observed, Verdict};
use std::collections::{BTreeMap, BTreeSet};

/// Why a test counts as failed although the run did not fail it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gone {
    /// It failed before and the run no longer reports it.
    NotReported,
    /// It failed before and the run skipped it.
    Skipped,
    /// Its file was in the first run and none of its tests is reported any more.
    FileGone,
}

impl Gone {
    /// The failure text that stands in for the missing result (also shown to the model).
    pub fn explain(&self) -> &'static str {
        match self {
            Gone::NotReported => "this test failed earlier in the cycle and is no longer reported by the runner (renamed, deselected or no longer collected); it counts as failed until it runs and passes again",
            Gone::Skipped => "this test failed earlier in the cycle and is now skipped; it counts as failed until it runs and passes again",
            Gone::FileGone => "this test's file was collected by the first full run and reports no test any more; its tests count as failed until they run again",
        }
    }
}

/// What the first full run saw, and every test that failed since.
#[derive(Debug, Clone, Default)]
pub struct Baseline {
    /// Test ids of the first full run (synthetic entries left out).
    first: Option<BTreeSet<String>>,
    /// Tests seen failing in any run of the cycle.
    ever_failed: BTreeSet<String>,
}

/// The file part of a test id (`tests/test_x.py::test_y` → `tests/test_x.py`).
fn file_of(id: &str) -> &str {
    id.split("::").next().unwrap_or(id)
}

/// A parametrised test's base (`test_add[2-3-5]` → `test_add`), else the id.
fn base_of(id: &str) -> &str {
    id.split_once('[').map_or(id, |(b, _)| b)
}

impl Baseline {
    /// Notes failures from any run (full, affected or a re-check).
    pub fn observe(&mut self, tests: &[Observed]) {
        for t in tests.iter().filter(|t| t.verdict == Verdict::Fail) {
            if !t.id.starts_with('[') {
                self.ever_failed.insert(t.id.clone());
            }
        }
    }

    /// Checks a full run against the first one (the first call records it and finds nothing).
    /// Returns the tests that count as failed, each with why; `observe` is called too.
    pub fn check_full(&mut self, tests: &[Observed]) -> Vec<(String, Gone)> {
        self.observe(tests);
        let reported: BTreeMap<&str, Verdict> =
            tests.iter().map(|t| (t.id.as_str(), t.verdict)).collect();
        let Some(first) = &self.first else {
            self.first = Some(
                reported
                    .keys()
                    .filter(|id| !id.starts_with('['))
                    .map(|id| id.to_string())
                    .collect(),
            );
            return Vec::new();
        };
        let files_now: BTreeSet<&str> = reported.keys().map(|id| file_of(id)).collect();
        let count_base = |ids: &mut dyn Iterator<Item = &str>, base: &str| {
            ids.filter(|id| base_of(id) == base).count()
        };
        let mut gone: BTreeMap<String, Gone> = BTreeMap::new();
        for id in first {
            if !files_now.contains(file_of(id)) && !reported.contains_key(id.as_str()) {
                gone.insert(id.clone(), Gone::FileGone);
            }
        }
        for id in &self.ever_failed {
            if gone.contains_key(id) {
                continue;
            }
            match reported.get(id.as_str()) {
                Some(Verdict::Skip) => {
                    gone.insert(id.clone(), Gone::Skipped);
                }
                Some(_) => {}
                None => {
                    // A file-level error that gave way to the file's tests is a fix, not a loss.
                    let file_now_reports = !id.contains("::")
                        && reported.keys().any(|r| r.starts_with(&format!("{id}::")));
                    // A parametrised case whose parameters changed: as many cases still run.
                    let base = base_of(id);
                    let recased = id.contains('[')
                        && count_base(&mut reported.keys().copied(), base)
                            >= count_base(&mut first.iter().map(String::as_str), base);
                    if !file_now_reports && !recased {
                        gone.insert(id.clone(), Gone::NotReported);
                    }
                }
            }
        }
        gone.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(tests: &[(&str, Verdict)]) -> Vec<Observed> {
        tests
            .iter()
            .map(|(id, v)| Observed::new(*id, *v, if *v == Verdict::Fail { "E boom" } else { "" }))
            .collect()
    }

    #[test]
    fn a_failing_test_that_is_renamed_or_skipped_counts_as_failed() {
        let mut b = Baseline::default();
        let first = run(&[
            ("t.py::test_a", Verdict::Pass),
            ("t.py::test_b", Verdict::Fail),
            ("t.py::test_c", Verdict::Fail),
        ]);
        assert!(b.check_full(&first).is_empty());
        let later = run(&[
            ("t.py::test_a", Verdict::Pass),
            ("t.py::test_c", Verdict::Skip),
        ]);
        assert_eq!(
            b.check_full(&later),
            vec![
                ("t.py::test_b".to_string(), Gone::NotReported),
                ("t.py::test_c".to_string(), Gone::Skipped)
            ]
        );
    }

    #[test]
    fn a_passing_test_of_a_file_still_collected_may_go() {
        let mut b = Baseline::default();
        b.check_full(&run(&[
            ("t.py::test_a", Verdict::Pass),
            ("t.py::test_b", Verdict::Pass),
        ]));
        assert!(b
            .check_full(&run(&[("t.py::test_a", Verdict::Pass)]))
            .is_empty());
    }

    #[test]
    fn a_file_no_longer_collected_loses_all_its_tests() {
        let mut b = Baseline::default();
        b.check_full(&run(&[
            ("a.py::test_a", Verdict::Pass),
            ("b.py::test_b", Verdict::Pass),
        ]));
        assert_eq!(
            b.check_full(&run(&[("a.py::test_a", Verdict::Pass)])),
            vec![("b.py::test_b".to_string(), Gone::FileGone)]
        );
    }

    #[test]
    fn a_fixed_collection_error_and_recased_parameters_are_not_losses() {
        let mut b = Baseline::default();
        b.check_full(&run(&[
            ("broken.py", Verdict::Fail),
            ("t.py::test_add[2-3-6]", Verdict::Fail),
        ]));
        let later = run(&[
            ("broken.py::test_x", Verdict::Pass),
            ("t.py::test_add[2-3-5]", Verdict::Pass),
        ]);
        assert!(b.check_full(&later).is_empty());
    }

    #[test]
    fn a_failure_seen_in_an_affected_run_is_remembered() {
        let mut b = Baseline::default();
        b.check_full(&run(&[("t.py::test_a", Verdict::Pass)]));
        b.observe(&run(&[("t.py::test_new", Verdict::Fail)]));
        assert_eq!(
            b.check_full(&run(&[("t.py::test_a", Verdict::Pass)])),
            vec![("t.py::test_new".to_string(), Gone::NotReported)]
        );
    }
}
