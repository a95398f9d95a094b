//! go test through the runner layer: real `go test -json` on tests/fixtures/go — every count
//! and outcome (subtests as leaves), a package that does not build, a panic, the `-run`
//! filter, `--failed` and listing.

use crate::common::*;
use huddle_runners::run::{failed_selection, FailedSelection};
use huddle_runners::rundir::default_runs_dir;
use huddle_runners::{list_tests, run_tests, Framework, Outcome, RunOptions, Selection};

const FW: Framework = Framework::Go;
const CALC: &str = "example.com/huddlefixture/calc::";

const EXPECTED: &[(&str, Outcome)] = &[
    ("calc::TestAdd", Outcome::Passed),
    ("calc::TestMultiplyWithAWrongExpectation", Outcome::Failed),
    ("calc::TestDivideByZeroReturnsAnError", Outcome::Failed),
    ("calc::TestNotReady", Outcome::Skipped),
    ("calc::TestAddTable/1+1", Outcome::Passed),
    ("calc::TestAddTable/2+2", Outcome::Passed),
    ("calc::TestAddTable/2+3", Outcome::Failed),
    ("calc::TestOuter/inner/works_when_nested", Outcome::Passed),
    ("calc::TestUnicode/héllo_wörld_✓_日本語", Outcome::Passed),
    ("calc::TestSlow", Outcome::Passed),
    ("panics::TestPanics", Outcome::Failed),
    ("strs::TestShout", Outcome::Passed),
    ("strs::TestWhisper", Outcome::Passed),
    ("example.com/huddlefixture/broken", Outcome::Error),
];

#[tokio::test]
async fn go_reports_every_outcome_of_the_fixture() {
    require_tool("go");
    let project = fixture("go");
    let report = run_tests(project.path(), FW, &opts())
        .await
        .expect("go runs")
        .report;
    assert_eq!(
        counts(&report),
        (8, 4, 1, 1, 14),
        "summary: {:?}",
        report.summary
    );
    assert_outcomes(&report, EXPECTED);
    assert!(longrepr(&report, "TestMultiplyWithAWrongExpectation")
        .contains("Multiply(2, 3) = 6, want 7"));
    assert!(longrepr(&report, "TestPanics").contains("assignment to entry in nil map"));
    assert!(longrepr(&report, "huddlefixture/broken").contains("doesnotexist"));
    let wrong = report
        .tests
        .iter()
        .find(|t| t.nodeid.ends_with("TestMultiplyWithAWrongExpectation"))
        .unwrap();
    assert_eq!(
        (wrong.file.as_deref(), wrong.lineno),
        (Some("calc/calc_test.go"), Some(20))
    );
}

#[tokio::test]
async fn go_filter_maps_to_run() {
    require_tool("go");
    let project = fixture("go");
    let opts = RunOptions {
        filter: Some("TestAddTable".into()),
        selection: Selection::Paths(vec!["./calc".into()]),
        ..opts()
    };
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("go runs")
        .report;
    assert_eq!(counts(&report), (2, 1, 0, 0, 3), "{:?}", report.tests);
}

#[tokio::test]
async fn go_failed_reruns_only_what_failed() {
    require_tool("go");
    let project = fixture("go");
    run_tests(project.path(), FW, &opts())
        .await
        .expect("first run");
    let runs = default_runs_dir(&project.path().canonicalize().unwrap());
    let FailedSelection::Tests(ids) = failed_selection(&runs, FW).expect("last run") else {
        panic!("expected failed tests to re-run");
    };
    let opts = RunOptions {
        selection: Selection::Tests(ids),
        ..opts()
    };
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("re-run")
        .report;
    // TestAddTable re-runs whole (its passing cases too); the broken package is still broken.
    assert_eq!(counts(&report), (2, 4, 1, 0, 7), "{:?}", report.tests);
    assert_eq!(
        outcome(&report, &format!("{CALC}TestAddTable/2+3")),
        Outcome::Failed
    );
}

#[tokio::test]
async fn go_lists_tests_without_running_them() {
    require_tool("go");
    let project = fixture("go");
    let opts = RunOptions {
        selection: Selection::Paths(vec!["./calc".into(), "./strs".into()]),
        ..opts()
    };
    let listing = list_tests(project.path(), FW, &opts)
        .await
        .expect("go lists");
    let mut tests = listing.tests.clone();
    tests.sort();
    assert_eq!(tests.len(), 10, "{tests:?}");
    assert!(tests.contains(&format!("{CALC}TestUnicode")));
    assert!(tests.contains(&"example.com/huddlefixture/strs::TestShout".to_string()));
}
