//! jest on tests/fixtures/jest-odd: a title and a failure message holding a lone UTF-16
//! surrogate (jest's JSON carries it as `\ud800`, which no UTF-8 decoder accepts) must not
//! turn the run or the listing into one error; `test.each` cases that share a title get ids
//! of their own, and a re-run of one of them by id still finds it.

use crate::common::*;
use crate::own_summary::own_summary;
use huddle_runners::run::{failed_selection, FailedSelection};
use huddle_runners::rundir::default_runs_dir;
use huddle_runners::{list_tests, run_tests, Framework, Outcome, RunOptions, Selection};

const FW: Framework = Framework::Jest;

const EXPECTED: &[(&str, Outcome)] = &[
    (
        "src/odd.test.js::a lone \u{fffd} surrogate in a title",
        Outcome::Passed,
    ),
    ("::a failure message with a lone surrogate", Outcome::Failed),
    ("::a real pair stays 😀", Outcome::Passed),
    ("src/odd.test.js::doubles a number", Outcome::Passed),
    ("src/odd.test.js::doubles a number [2]", Outcome::Failed),
    ("src/odd.test.js::squares 2", Outcome::Passed),
    ("src/odd.test.js::squares 2 [2]", Outcome::Passed),
];

#[tokio::test]
async fn a_lone_surrogate_is_replaced_and_duplicates_get_their_own_ids() {
    require_tool("node");
    let project = fixture("jest-odd");
    let report = run_tests(project.path(), FW, &opts())
        .await
        .expect("jest runs")
        .report;
    assert_outcomes(&report, EXPECTED);
    assert_eq!(counts(&report), (5, 2, 0, 0, 7), "{:#?}", report.tests);
    let (passed, failed, skipped, total) = own_summary(project.path(), "jest");
    assert_eq!(
        (passed, failed, skipped, total),
        (5, 2, 0, 7),
        "jest's own summary"
    );
    assert!(longrepr(&report, "::a failure message with a lone surrogate").contains('\u{fffd}'));

    let listed = list_tests(project.path(), FW, &opts())
        .await
        .expect("lists");
    assert!(listed.errors.is_empty(), "{:?}", listed.errors);
    assert_eq!(sorted(listed.tests), test_ids(&report));
}

#[tokio::test]
async fn a_failed_duplicate_is_rerun_by_its_title() {
    require_tool("node");
    let project = fixture("jest-odd");
    run_tests(project.path(), FW, &opts())
        .await
        .expect("jest runs");
    let FailedSelection::Tests(ids) =
        failed_selection(&default_runs_dir(project.path()), FW).expect("reads the last run")
    else {
        panic!("expected failed tests")
    };
    assert!(
        ids.contains(&"src/odd.test.js::doubles a number [2]".to_string()),
        "{ids:?}"
    );
    let rerun = RunOptions {
        selection: Selection::Tests(vec!["src/odd.test.js::doubles a number [2]".into()]),
        ..opts()
    };
    let report = run_tests(project.path(), FW, &rerun)
        .await
        .expect("jest reruns")
        .report;
    // jest knows both cases by the one title, so both run again, with the same ids as before
    // (the file's other tests are reported as skipped, as jest reports a filtered file).
    assert_eq!(outcome(&report, "::doubles a number"), Outcome::Passed);
    assert_eq!(outcome(&report, "::doubles a number [2]"), Outcome::Failed);
    assert_eq!((report.summary.passed, report.summary.failed), (1, 1));
}
