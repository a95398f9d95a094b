//! mocha through the runner layer: real mocha on tests/fixtures/mocha — every count and
//! outcome, the name filter, `--failed`, listing, and a spec file that fails to load.

use crate::common::*;
use huddle_runners::run::{failed_selection, FailedSelection};
use huddle_runners::rundir::default_runs_dir;
use huddle_runners::{list_tests, run_tests, Framework, Outcome, RunOptions, Selection};

const FW: Framework = Framework::Mocha;

/// Also mocha 8's outcomes (`mocha8.rs`): the fixtures share their spec files.
pub(crate) const EXPECTED: &[(&str, Outcome)] = &[
    ("test/math.spec.js::adds two numbers", Outcome::Passed),
    ("::multiplies with a wrong expectation", Outcome::Failed),
    ("::divides by zero and throws", Outcome::Failed),
    ("::is not ready yet", Outcome::Skipped),
    (
        "test/math.spec.js::add table::add(1, 1) = 2",
        Outcome::Passed,
    ),
    ("::add table::add(2, 2) = 4", Outcome::Passed),
    ("::add table::add(2, 3) = 6", Outcome::Failed),
    (
        "test/math.spec.js::outer inner::works when nested",
        Outcome::Passed,
    ),
    ("::héllo wörld ✓ 日本語", Outcome::Passed),
    ("::slow when FIXTURE_SLOW is set", Outcome::Passed),
    (
        "test/strings.spec.js::shout upper-cases and adds a bang",
        Outcome::Passed,
    ),
    ("test/strings.spec.js::whisper lower-cases", Outcome::Passed),
];

#[tokio::test]
async fn mocha_reports_every_outcome_of_the_fixture() {
    require_tool("node");
    let project = fixture("mocha");
    let report = run_tests(project.path(), FW, &opts())
        .await
        .expect("mocha runs")
        .report;
    assert_eq!(
        counts(&report),
        (8, 3, 0, 1, 12),
        "summary: {:?}",
        report.summary
    );
    assert_outcomes(&report, EXPECTED);
    assert_eq!(
        report.exitcode, 3,
        "mocha exits with the number of failures"
    );
    assert!(longrepr(&report, "::multiplies with a wrong expectation").contains("6 !== 7"));
    assert!(longrepr(&report, "::divides by zero and throws").contains("division by zero"));
}

#[tokio::test]
async fn mocha_spec_that_fails_to_load_is_an_error_with_its_message() {
    require_tool("node");
    let project = fixture("mocha");
    let opts = RunOptions {
        selection: Selection::Paths(vec!["load-error/broken.spec.js".into(), "test".into()]),
        ..opts()
    };
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("mocha runs")
        .report;
    assert_eq!(counts(&report), (0, 0, 1, 0, 1), "{:?}", report.tests);
    assert_eq!(report.tests[0].nodeid, "load-error/broken.spec.js");
    assert!(longrepr(&report, "broken.spec.js").contains("Cannot find module './does-not-exist'"));
    assert_ne!(report.exitcode, 0);
}

#[tokio::test]
async fn mocha_filter_maps_to_grep() {
    require_tool("node");
    let project = fixture("mocha");
    let opts = RunOptions {
        filter: Some("add table".into()),
        ..opts()
    };
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("mocha runs")
        .report;
    assert_eq!(counts(&report), (2, 1, 0, 0, 3), "{:?}", report.tests);
}

#[tokio::test]
async fn mocha_failed_reruns_only_what_failed() {
    require_tool("node");
    let project = fixture("mocha");
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
    assert_eq!(counts(&report), (0, 3, 0, 0, 3), "{:?}", report.tests);
}

#[tokio::test]
async fn mocha_lists_the_tests_a_run_reports_without_running_them() {
    require_tool("node");
    let project = fixture("mocha");
    let pid_file = project.path().join("slow.pid");
    // Were the slow test's body run, it would write this file and wait ten minutes.
    let listing_opts = RunOptions {
        env: vec![
            ("FIXTURE_SLOW".into(), "1".into()),
            ("FIXTURE_PID_FILE".into(), pid_file.display().to_string()),
        ],
        timeout: std::time::Duration::from_secs(120),
        ..opts()
    };
    let listing = list_tests(project.path(), FW, &listing_opts)
        .await
        .expect("mocha lists");
    assert!(!pid_file.exists(), "listing ran a test body");
    assert!(
        !project.path().join(".huddle").exists(),
        "listing writes no run"
    );
    assert_eq!(listing.tests.len(), 12, "{:?}", listing.tests);
    assert!(listing
        .tests
        .contains(&"test/math.spec.js::outer inner::works when nested".to_string()));
    let report = run_tests(project.path(), FW, &opts())
        .await
        .expect("mocha runs")
        .report;
    assert_eq!(sorted(listing.tests), test_ids(&report));
}

/// A run that writes no report and names no spec file (here a `--require` that does not
/// exist) is one error entry saying which report was expected and what mocha printed.
pub(crate) async fn a_run_without_a_report_is_an_error_naming_it(fixture_name: &str) {
    require_tool("node");
    let project = fixture(fixture_name);
    let opts = RunOptions {
        runner_args: vec!["--require".into(), "./test/setup-missing.js".into()],
        ..opts()
    };
    let outcome = run_tests(project.path(), FW, &opts)
        .await
        .expect("mocha runs");
    let report = &outcome.report;
    assert_eq!(counts(report), (0, 0, 1, 0, 1), "{:?}", report.tests);
    assert_eq!(report.tests[0].nodeid, "[runner]");
    let text = longrepr(report, "[runner]");
    let expected = outcome.run_dir.join("mocha.json");
    assert!(text.contains(&expected.display().to_string()), "{text}");
    assert!(text.contains("wrote no JSON report"), "{text}");
    assert!(text.contains("setup-missing.js"), "mocha's stderr: {text}");
    assert_ne!(report.exitcode, 0);
    assert!(!report.all_passed());
}

#[tokio::test]
async fn mocha_run_without_a_report_is_an_error_naming_it() {
    a_run_without_a_report_is_an_error_naming_it("mocha").await;
}
