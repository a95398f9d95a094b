//! vitest with its config given only in the test script: real vitest on
//! tests/fixtures/vitest-config (`vitest run --config config/vitest.config.mjs`, which sets the
//! `include` and an `@/` alias). The caller's arguments after `--` reach vitest too.

use crate::common::*;
use crate::jest_config::set_test_script;
use huddle_runners::scrub::strip_ansi;
use huddle_runners::{list_tests, run_tests, Framework, Outcome, Report, RunOptions, RunnerError};

const FW: Framework = Framework::Vitest;

const EXPECTED: &[(&str, Outcome)] = &[
    ("tests/unit/math.test.js::adds two numbers", Outcome::Passed),
    ("::multiplies with a wrong expectation", Outcome::Failed),
    ("::is not ready yet", Outcome::Skipped),
    ("::outer::inner::works when nested", Outcome::Passed),
    ("::héllo wörld ✓ 日本語", Outcome::Passed),
];

fn assert_fixture_outcomes(report: &Report) {
    assert_eq!(
        counts(report),
        (3, 1, 0, 1, 5),
        "summary: {:?}",
        report.summary
    );
    assert_outcomes(report, EXPECTED);
}

#[tokio::test]
async fn vitest_takes_the_config_from_the_test_script() {
    require_tool("node");
    let project = fixture("vitest-config");
    let report = run_tests(project.path(), FW, &opts())
        .await
        .expect("vitest runs")
        .report;
    assert_fixture_outcomes(&report);
    let direct = std::process::Command::new("node")
        .args([
            "node_modules/.bin/vitest",
            "run",
            "--config",
            "config/vitest.config.mjs",
        ])
        .current_dir(project.path())
        .output()
        .expect("vitest runs directly");
    let text = strip_ansi(&String::from_utf8_lossy(&direct.stdout)).into_owned();
    assert!(
        text.contains("Tests  1 failed | 3 passed | 1 skipped (5)"),
        "vitest printed: {text}"
    );
}

#[tokio::test]
async fn without_the_config_vitest_loads_nothing() {
    require_tool("node");
    let project = fixture("vitest-config");
    set_test_script(project.path(), "vitest run");
    let report = run_tests(project.path(), FW, &opts())
        .await
        .expect("vitest runs")
        .report;
    assert_eq!(counts(&report), (0, 0, 2, 0, 2), "{:?}", report.tests);
}

#[tokio::test]
async fn the_callers_arguments_after_double_dash_reach_vitest() {
    require_tool("node");
    let project = fixture("vitest-config");
    set_test_script(project.path(), "vitest");
    let opts = RunOptions {
        runner_args: vec!["-c".into(), "config/vitest.config.mjs".into()],
        ..opts()
    };
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("vitest runs")
        .report;
    assert_fixture_outcomes(&report);
}

#[tokio::test]
async fn vitest_config_listing_gives_the_runs_ids() {
    require_tool("node");
    let project = fixture("vitest-config");
    let listing = list_tests(project.path(), FW, &opts())
        .await
        .expect("vitest lists");
    assert!(listing.errors.is_empty(), "{:?}", listing.errors);
    let report = run_tests(project.path(), FW, &opts())
        .await
        .expect("vitest runs")
        .report;
    assert_eq!(listing.tests.len(), 5, "{:?}", listing.tests);
    assert_eq!(sorted(listing.tests), test_ids(&report));
}

#[tokio::test]
async fn a_reporter_after_double_dash_is_refused() {
    let project = fixture("vitest-config");
    let opts = RunOptions {
        runner_args: vec!["--reporter=dot".into()],
        ..opts()
    };
    let err = run_tests(project.path(), FW, &opts)
        .await
        .expect_err("refused");
    assert!(matches!(err, RunnerError::Guard(_)), "{err}");
    assert!(err.to_string().contains("\"--reporter=dot\""), "{err}");
    assert!(!project.path().join(".huddle").exists(), "nothing ran");
}
