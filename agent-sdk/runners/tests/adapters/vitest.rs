//! vitest through the runner layer: real vitest on tests/fixtures/vitest — every count and outcome,
//! the name filter, `--failed`, and listing.

use crate::common::*;
use huddle_runners::run::{failed_selection, FailedSelection};
use huddle_runners::rundir::default_runs_dir;
use huddle_runners::{list_tests, run_tests, Framework, Outcome, RunOptions, Selection};

const FW: Framework = Framework::Vitest;

const EXPECTED: &[(&str, Outcome)] = &[
    ("src/math.test.js::adds two numbers", Outcome::Passed),
    ("::multiplies with a wrong expectation", Outcome::Failed),
    ("::divides by zero and throws", Outcome::Failed),
    ("::is not ready yet", Outcome::Skipped),
    ("::add(1, 1) = 2", Outcome::Passed),
    ("::add(2, 2) = 4", Outcome::Passed),
    ("::add(2, 3) = 6", Outcome::Failed),
    (
        "src/math.test.js::outer::inner::works when nested",
        Outcome::Passed,
    ),
    ("::héllo wörld ✓ 日本語", Outcome::Passed),
    ("::slow when FIXTURE_SLOW is set", Outcome::Passed),
    (
        "src/strings.test.js::shout upper-cases and adds a bang",
        Outcome::Passed,
    ),
    ("src/strings.test.js::whisper lower-cases", Outcome::Passed),
    ("src/broken.test.js", Outcome::Error),
];

#[tokio::test]
async fn vitest_reports_every_outcome_of_the_fixture() {
    require_tool("node");
    let project = fixture("vitest");
    let outcome = run_tests(project.path(), FW, &opts())
        .await
        .expect("vitest runs");
    let report = &outcome.report;
    assert_eq!(
        counts(report),
        (8, 3, 1, 1, 13),
        "summary: {:?}",
        report.summary
    );
    assert_outcomes(report, EXPECTED);
    assert!(
        longrepr(report, "::multiplies with a wrong expectation").contains("expected 6 to be 7")
    );
    assert!(longrepr(report, "::divides by zero and throws").contains("division by zero"));
    assert!(longrepr(report, "src/broken.test.js").contains("does-not-exist"));
    let adds = report
        .tests
        .iter()
        .find(|t| t.nodeid.ends_with("::adds two numbers"))
        .unwrap();
    assert_eq!(
        (adds.file.as_deref(), adds.lineno),
        (Some("src/math.test.js"), Some(7))
    );
    assert!(!report.all_passed());
}

#[tokio::test]
async fn vitest_filter_maps_to_test_name_pattern() {
    require_tool("node");
    let project = fixture("vitest");
    let opts = RunOptions {
        filter: Some("nested|shout".into()),
        selection: Selection::Paths(vec![
            "src/math.test.js".into(),
            "src/strings.test.js".into(),
        ]),
        ..opts()
    };
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("vitest runs")
        .report;
    assert_eq!(outcome(&report, "::works when nested"), Outcome::Passed);
    assert_eq!(
        outcome(&report, "::shout upper-cases and adds a bang"),
        Outcome::Passed
    );
    assert_eq!(report.summary.passed, 2, "{:?}", report.summary);
    assert_eq!(report.summary.failed + report.summary.error, 0);
}

#[tokio::test]
async fn vitest_failed_reruns_only_what_failed() {
    require_tool("node");
    let project = fixture("vitest");
    run_tests(project.path(), FW, &opts())
        .await
        .expect("first run");
    let runs = default_runs_dir(&project.path().canonicalize().unwrap());
    let FailedSelection::Tests(ids) = failed_selection(&runs, FW).expect("last run") else {
        panic!("expected failed tests to re-run");
    };
    assert_eq!(ids.len(), 4, "{ids:?}");
    let opts = RunOptions {
        selection: Selection::Tests(ids),
        ..opts()
    };
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("re-run")
        .report;
    assert_eq!(counts(&report).1, 3, "{:?}", report.tests);
    assert_eq!(outcome(&report, "src/broken.test.js"), Outcome::Error);
    assert_eq!(
        report.summary.passed, 0,
        "passing tests are not re-run: {:?}",
        report.tests
    );
}

#[tokio::test]
async fn vitest_lists_the_tests_a_run_reports_without_running_them() {
    require_tool("node");
    let project = fixture("vitest");
    let selection = Selection::Paths(vec![
        "src/math.test.js".into(),
        "src/strings.test.js".into(),
    ]);
    let pid_file = project.path().join("slow.pid");
    // Were the slow test's body run, it would write this file and wait ten minutes.
    let listing_opts = RunOptions {
        selection: selection.clone(),
        env: vec![
            ("FIXTURE_SLOW".into(), "1".into()),
            ("FIXTURE_PID_FILE".into(), pid_file.display().to_string()),
        ],
        timeout: std::time::Duration::from_secs(120),
        ..opts()
    };
    let listing = list_tests(project.path(), FW, &listing_opts)
        .await
        .expect("vitest lists");
    assert!(!pid_file.exists(), "listing ran a test body");
    assert!(
        !project.path().join(".huddle").exists(),
        "listing writes no run"
    );
    // The skipped test is listed too: the run reports it.
    assert_eq!(listing.tests.len(), 12, "{:?}", listing.tests);
    assert!(listing
        .tests
        .contains(&"src/math.test.js::outer::inner::works when nested".to_string()));
    assert!(listing.errors.is_empty(), "{:?}", listing.errors);
    let run_opts = RunOptions {
        selection,
        ..opts()
    };
    let report = run_tests(project.path(), FW, &run_opts)
        .await
        .expect("vitest runs")
        .report;
    assert_eq!(sorted(listing.tests), test_ids(&report));
}

#[tokio::test]
async fn vitest_listing_applies_the_filter_as_vitest_would() {
    require_tool("node");
    let project = fixture("vitest");
    // vitest matches -t against "describe… title", case-sensitively.
    let opts = RunOptions {
        filter: Some("outer inner|^shout|^WHISPER".into()),
        ..opts()
    };
    let listing = list_tests(project.path(), FW, &opts)
        .await
        .expect("vitest lists");
    assert_eq!(
        sorted(listing.tests),
        [
            "src/math.test.js::outer::inner::works when nested",
            "src/strings.test.js::shout upper-cases and adds a bang"
        ]
    );
}

#[tokio::test]
async fn vitest_listing_names_a_file_that_fails_to_load() {
    require_tool("node");
    let project = fixture("vitest");
    let listing = list_tests(project.path(), FW, &opts())
        .await
        .expect("vitest lists");
    assert!(
        listing.errors.iter().any(|e| e.contains("does-not-exist")),
        "{:?}",
        listing.errors
    );
}
