//! Maestro through the runner layer: a stand-in `maestro` on the run's PATH
//! (tests/fixtures/maestro/bin) runs the flows in `.maestro/` by the outcome each names and
//! writes JUnit XML in the shape Maestro's own JUnitTestSuiteReporterTest pins; `checkout`
//! fails on its first attempt only, so huddle's retry and `flaky_in_run` are exercised. No
//! device, emulator or JVM Maestro is involved.

use crate::common::*;
use huddle_runners::detect::{detect, Overrides};
use huddle_runners::run::{failed_selection, FailedSelection};
use huddle_runners::rundir::default_runs_dir;
use huddle_runners::{list_tests, run_tests, Framework, Outcome, RunOptions, Selection};
use std::path::Path;

const FW: Framework = Framework::Maestro;

/// The run's options: the stand-in first on PATH.
fn m_opts(project: &Path, extra: &[(&str, &str)]) -> RunOptions {
    let path = format!(
        "{}:{}",
        project.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut env = vec![("PATH".to_string(), path)];
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    RunOptions { env, ..opts() }
}

#[tokio::test]
async fn maestro_is_detected_and_a_flow_failing_once_passes_on_the_retry() {
    require_tool("node");
    let project = fixture("maestro");
    let detection = detect(project.path(), &Overrides::default()).expect("detects");
    assert_eq!(detection.framework, FW, "{}", detection.explain());
    let report = run_tests(project.path(), FW, &m_opts(project.path(), &[]))
        .await
        .expect("maestro runs")
        .report;
    assert_outcomes(
        &report,
        &[
            (".maestro/checkout.yaml::checkout", Outcome::Passed),
            (".maestro/login.yaml::Login", Outcome::Passed),
            (".maestro/search.yaml::search", Outcome::Passed),
            (
                ".maestro/settings_dark_mode.yaml::Dark mode",
                Outcome::Failed,
            ),
        ],
    );
    assert_eq!(report.flaky, [".maestro/checkout.yaml::checkout"]);
    assert_eq!(report.flaky_in_run, 1);
    let text = longrepr(&report, "::Dark mode");
    assert!(
        text.contains("Dark mode on is visible") && text.contains("[retry] failed again"),
        "{text}"
    );
    // The first run took the folder; the retry's own report is kept beside it.
    assert!(
        report.command.iter().any(|a| a == ".maestro"),
        "{:?}",
        report.command
    );
    assert_eq!(report.exitcode, 1, "the retry still failed a flow");
    assert!(report.tests.iter().all(|t| !t.is_synthetic()));
}

#[tokio::test]
async fn a_retry_that_passes_every_failure_makes_the_run_pass() {
    require_tool("node");
    let project = fixture("maestro");
    let opts = RunOptions {
        filter: Some("check".into()),
        ..m_opts(project.path(), &[])
    };
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("runs")
        .report;
    assert_eq!(counts(&report), (1, 0, 0, 0, 1), "{:?}", report.tests);
    assert!(
        report.command.iter().any(|a| a == ".maestro/checkout.yaml"),
        "{:?}",
        report.command
    );
    assert_eq!((report.exitcode, report.flaky_in_run), (0, 1));
    assert!(report.all_passed());
    let summary = huddle_runners::human::render_summary(&report, None);
    assert!(
        summary.contains("flaky in this run: 1 (failed, then passed on a retry): .maestro/checkout.yaml::checkout"),
        "{summary}"
    );
}

#[tokio::test]
async fn maestro_retry_false_keeps_the_first_attempt() {
    require_tool("node");
    let project = fixture("maestro");
    let opts = m_opts(project.path(), &[("MAESTRO_RETRY", "false")]);
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("runs")
        .report;
    assert_eq!(counts(&report), (2, 2, 0, 0, 4), "{:?}", report.tests);
    assert_eq!(report.flaky_in_run, 0);
    assert_eq!(outcome(&report, "::checkout"), Outcome::Failed);
}

#[tokio::test]
async fn failed_reruns_the_failed_flow_files_and_list_names_every_flow() {
    require_tool("node");
    let project = fixture("maestro");
    let opts = m_opts(project.path(), &[]);
    run_tests(project.path(), FW, &opts)
        .await
        .expect("full run");
    let runs = default_runs_dir(&project.path().canonicalize().unwrap());
    let FailedSelection::Tests(ids) = failed_selection(&runs, FW).expect("last run") else {
        panic!("expected failed flows to re-run");
    };
    assert_eq!(ids, [".maestro/settings_dark_mode.yaml::Dark mode"]);
    let rerun = RunOptions {
        selection: Selection::Tests(ids),
        ..opts.clone()
    };
    let report = run_tests(project.path(), FW, &rerun)
        .await
        .expect("re-run")
        .report;
    assert_eq!(counts(&report), (0, 1, 0, 0, 1), "{:?}", report.tests);
    assert!(report
        .command
        .iter()
        .any(|a| a == ".maestro/settings_dark_mode.yaml"));
    let listing = list_tests(project.path(), FW, &opts).await.expect("lists");
    assert_eq!(
        listing.tests,
        [
            ".maestro/checkout.yaml::checkout",
            ".maestro/login.yaml::Login",
            ".maestro/search.yaml::search",
            ".maestro/settings_dark_mode.yaml::Dark mode",
        ]
    );
}

#[tokio::test]
async fn a_filter_matching_no_flow_file_says_no_tests_ran() {
    require_tool("node");
    let project = fixture("maestro");
    let opts = RunOptions {
        filter: Some("nothing-like-this".into()),
        ..m_opts(project.path(), &[])
    };
    let err = run_tests(project.path(), FW, &opts)
        .await
        .expect_err("nothing to run");
    assert!(err.to_string().contains("no tests ran"), "{err}");
}
