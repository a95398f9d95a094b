//! Counts while the run goes ([`huddle_runners::live`]) on real runs of the fixtures: once a
//! run is over they agree with its report — every test that ended was counted from the
//! runner's stream, and every failure.

use crate::common::*;
use huddle_runners::live::{with_live_counts, LiveCounts};
use huddle_runners::{run_tests, Framework, Report};
use std::sync::Arc;

async fn run_counted(fixture_name: &str, fw: Framework) -> (Report, (u64, u64)) {
    let project = fixture(fixture_name);
    let counts = Arc::new(LiveCounts::default());
    let outcome = with_live_counts(counts.clone(), run_tests(project.path(), fw, &opts()))
        .await
        .expect("the run");
    (outcome.report, counts.snapshot())
}

/// (tests that ended, failed ones) by the report.
fn ended(report: &Report) -> (u64, u64) {
    let s = report.summary;
    ((s.passed + s.failed + s.skipped) as u64, s.failed as u64)
}

#[tokio::test]
async fn go_counts_every_test_event_as_it_streams() {
    require_tool("go");
    let (report, live) = run_counted("go", Framework::Go).await;
    assert!(live.0 > 0, "{live:?}");
    assert_eq!(live, ended(&report));
}

#[tokio::test]
async fn cargo_counts_every_result_line() {
    require_tool("cargo");
    let (report, live) = run_counted("cargo", Framework::Cargo).await;
    assert!(live.0 > 0, "{live:?}");
    assert_eq!(live, ended(&report));
}

#[tokio::test]
async fn jest_counts_its_reporters_progress_lines() {
    require_tool("node");
    let (report, live) = run_counted("jest", Framework::Jest).await;
    let s = report.summary;
    assert!(live.0 > 0, "{live:?}");
    // jest streams the tests it runs (not the skipped); a file that fails to load is a
    // failure but no test.
    assert_eq!(live.0, (s.passed + s.failed) as u64, "{live:?} {s:?}");
    assert_eq!(live.1, (s.failed + s.error) as u64, "{live:?} {s:?}");
}

#[tokio::test]
async fn pytest_counts_its_reporters_progress_lines() {
    require_pytest();
    let (report, live) = run_counted("pytest", Framework::Pytest).await;
    let s = report.summary;
    // A test that errors in setup ended (and failed); a file that fails to collect only failed.
    assert_eq!(live, (13, 5), "{s:?}");
    assert_eq!(
        (s.passed + s.failed + s.skipped + 1, s.failed + s.error),
        (13, 5)
    );
}

#[tokio::test]
async fn vitest_counts_its_reporters_progress_lines() {
    require_tool("node");
    let (report, live) = run_counted("vitest", Framework::Vitest).await;
    let s = report.summary;
    assert!(live.0 > 0, "{live:?}");
    // vitest 3 reports each test case as it ends, skipped ones included.
    assert_eq!(
        live.0,
        (s.passed + s.failed + s.skipped) as u64,
        "{live:?} {s:?}"
    );
    assert_eq!(live.1, s.failed as u64, "{live:?} {s:?}");
}
