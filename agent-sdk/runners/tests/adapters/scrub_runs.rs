//! No secret survives a real run: pytest (through huddle's reporter, pytest-json-report and
//! JUnit) and jest run generated tests that print and fail with every kind of secret, and neither the
//! report, nor any file in the run directory, holds one; the markers stand in their place and
//! every structured file still parses.

use crate::common::*;
use crate::secrets::{leaks, leaks_in_dir, write_leaky_jest_test, write_leaky_pytest_project};
use huddle_runners::junit::parse_junit;
use huddle_runners::run::{failed_selection, FailedSelection};
use huddle_runners::scrub::{marker, REDACTED_PREFIX};
use huddle_runners::{run_tests, Framework, PluginPolicy, Report, RunOptions, Selection};
use std::path::Path;

fn read(dir: &Path, name: &str) -> String {
    let path = dir.join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The checks every run shares: the returned report, `report.json`, `junit.xml` and every
/// other file in the run directory are free of secrets, hold markers, and still parse.
fn assert_run_dir_is_clean(report: &Report, run_dir: &Path, marked: &[&str]) {
    let json = serde_json::to_string(report).unwrap();
    assert_eq!(leaks(&json), Vec::<&str>::new(), "in the returned report");
    assert_eq!(
        leaks_in_dir(run_dir),
        Vec::new(),
        "in {}",
        run_dir.display()
    );
    for name in marked {
        assert!(
            read(run_dir, name).contains(REDACTED_PREFIX),
            "{name} holds no marker:\n{}",
            read(run_dir, name)
        );
    }
    let on_disk: Report =
        serde_json::from_str(&read(run_dir, "report.json")).expect("report.json parses");
    // Durations may differ in their last digit after a round trip through JSON.
    let texts = |r: &Report| -> Vec<(String, Option<String>)> {
        r.tests
            .iter()
            .map(|t| (t.nodeid.clone(), t.longrepr.clone()))
            .collect()
    };
    assert_eq!(
        texts(&on_disk),
        texts(report),
        "report.json is the returned report"
    );
    let cases = parse_junit(&read(run_dir, "junit.xml")).expect("junit.xml parses");
    assert_eq!(cases.len(), report.tests.len());
}

fn pytest_summary_line(project: &Path) -> String {
    let out = std::process::Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .current_dir(project)
        .output()
        .expect("pytest runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout.lines().last().unwrap_or_default().to_string()
}

async fn leaky_pytest_run(plugins: PluginPolicy, runner_file: &str) {
    require_pytest();
    let project = tempfile::tempdir().unwrap();
    write_leaky_pytest_project(project.path());
    assert!(
        pytest_summary_line(project.path()).starts_with("2 failed, 1 passed"),
        "pytest itself: {}",
        pytest_summary_line(project.path())
    );
    let opts = RunOptions { plugins, ..opts() };
    let run = run_tests(project.path(), Framework::Pytest, &opts)
        .await
        .expect("pytest runs");
    let report = &run.report;
    assert_eq!(counts(report), (1, 2, 0, 0, 3), "{:#?}", report.tests);
    let failing = longrepr(report, "::test_leaks_every_secret");
    for kind in [
        "api-key",
        "github-token",
        "private-key",
        "jwt",
        "secret",
        "huddle-token",
    ] {
        assert!(
            failing.contains(&marker(kind)),
            "no {kind} marker in {failing}"
        );
    }
    outcome(report, &format!("::test_id[{}]", marker("api-key")));
    outcome(
        report,
        &format!("::test_passes[{}]", marker("aws-access-key-id")),
    );
    assert_run_dir_is_clean(
        report,
        &run.run_dir,
        &[
            "report.json",
            "junit.xml",
            "stdout.txt",
            "stderr.txt",
            runner_file,
        ],
    );
    let runner_report = read(&run.run_dir, runner_file);
    if runner_file.ends_with(".json") {
        serde_json::from_str::<serde_json::Value>(&runner_report).expect("still JSON");
    } else {
        assert_eq!(parse_junit(&runner_report).expect("still JUnit").len(), 3);
    }
    // A redacted id cannot be selected again: --failed runs everything instead.
    let runs = run.run_dir.parent().unwrap();
    match failed_selection(runs, Framework::Pytest).unwrap() {
        FailedSelection::Everything { reason } => assert!(reason.contains("redacted"), "{reason}"),
        other => panic!("expected the full suite, got {other:?}"),
    }
}

#[tokio::test]
async fn pytest_default_reporter_run_keeps_no_secret() {
    leaky_pytest_run(PluginPolicy::Auto, "pytest-huddle.json").await;
}

#[tokio::test]
async fn pytest_json_report_run_keeps_no_secret() {
    leaky_pytest_run(PluginPolicy::Require, "pytest-report.json").await;
}

#[tokio::test]
async fn pytest_junit_run_keeps_no_secret() {
    leaky_pytest_run(PluginPolicy::Never, "pytest-junit.xml").await;
}

#[tokio::test]
async fn jest_run_keeps_no_secret() {
    require_tool("node");
    let project = fixture("jest");
    let file = write_leaky_jest_test(project.path());
    let opts = RunOptions {
        selection: Selection::Paths(vec![file.to_string()]),
        ..opts()
    };
    let run = run_tests(project.path(), Framework::Jest, &opts)
        .await
        .expect("jest runs");
    let report = &run.report;
    assert_eq!(counts(report), (0, 2, 0, 0, 2), "{:#?}", report.tests);
    outcome(report, &format!("::id {}", marker("github-token")));
    let failing = longrepr(report, "::leaks every secret");
    assert!(failing.contains(&marker("private-key")), "{failing}");
    serde_json::from_str::<serde_json::Value>(&read(&run.run_dir, "jest.json"))
        .expect("jest.json still parses");
    assert_run_dir_is_clean(
        report,
        &run.run_dir,
        &["report.json", "junit.xml", "stderr.txt", "jest.json"],
    );
}
