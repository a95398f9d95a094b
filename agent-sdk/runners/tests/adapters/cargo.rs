//! cargo through the runner layer: real `cargo nextest run` (JUnit) and real `cargo test`
//! (libtest lines) on tests/fixtures/cargo, which must give the same report; plus a build
//! failure, the filter, `--failed` and listing.

use crate::common::*;
use huddle_runners::run::{failed_selection, FailedSelection};
use huddle_runners::rundir::default_runs_dir;
use huddle_runners::{
    list_tests, run_tests, Framework, Outcome, PluginPolicy, RunOptions, Selection,
};

const FW: Framework = Framework::Cargo;

const EXPECTED: &[(&str, Outcome)] = &[
    ("src/lib.rs::tests::adds_two_numbers", Outcome::Passed),
    (
        "src/lib.rs::tests::multiplies_with_a_wrong_expectation",
        Outcome::Failed,
    ),
    (
        "src/lib.rs::tests::divides_by_zero_and_panics",
        Outcome::Failed,
    ),
    ("src/lib.rs::tests::not_ready", Outcome::Skipped),
    ("src/lib.rs::tests::add_table_1_1", Outcome::Passed),
    ("src/lib.rs::tests::add_table_2_2", Outcome::Passed),
    ("src/lib.rs::tests::add_table_2_3", Outcome::Failed),
    (
        "src/lib.rs::tests::outer::inner::works_when_nested",
        Outcome::Passed,
    ),
    ("src/lib.rs::tests::héllo_wörld", Outcome::Passed),
    (
        "src/lib.rs::tests::slow_when_fixture_slow_is_set",
        Outcome::Passed,
    ),
    (
        "tests/strings.rs::shout_upper_cases_and_adds_a_bang",
        Outcome::Passed,
    ),
    ("tests/strings.rs::shout_keeps_unicode", Outcome::Passed),
];

fn with(plugins: PluginPolicy) -> RunOptions {
    RunOptions { plugins, ..opts() }
}

async fn full_run(plugins: PluginPolicy) {
    require_tool("cargo");
    let project = fixture("cargo");
    let report = run_tests(project.path(), FW, &with(plugins))
        .await
        .expect("cargo runs")
        .report;
    assert_eq!(
        counts(&report),
        (8, 3, 0, 1, 12),
        "summary: {:?}",
        report.summary
    );
    assert_outcomes(&report, EXPECTED);
    assert!(longrepr(&report, "::multiplies_with_a_wrong_expectation").contains("right: 7"));
    assert!(longrepr(&report, "::divides_by_zero_and_panics").contains("division by zero"));
    let wrong = report
        .tests
        .iter()
        .find(|t| t.nodeid.ends_with("::multiplies_with_a_wrong_expectation"))
        .unwrap();
    assert_eq!(
        (wrong.file.as_deref(), wrong.lineno),
        (Some("src/lib.rs"), Some(38))
    );
}

#[tokio::test]
async fn cargo_test_libtest_lines_report_every_outcome() {
    full_run(PluginPolicy::Never).await;
}

#[tokio::test]
async fn cargo_nextest_junit_reports_every_outcome() {
    require_tool("cargo-nextest");
    full_run(PluginPolicy::Require).await;
}

#[tokio::test]
async fn cargo_build_failure_is_an_error_with_the_compiler_message() {
    require_tool("cargo");
    let project = fixture("cargo");
    std::fs::write(
        project.path().join("tests/broken.rs"),
        "#[test]\nfn f() { let x: u8 = \"no\"; }\n",
    )
    .unwrap();
    for plugins in [PluginPolicy::Never, PluginPolicy::Auto] {
        let report = run_tests(project.path(), FW, &with(plugins))
            .await
            .expect("cargo runs")
            .report;
        let build = report
            .tests
            .iter()
            .find(|t| t.nodeid == "[build]")
            .expect("a [build] error");
        assert_eq!(build.outcome, Outcome::Error);
        assert!(
            build
                .longrepr
                .as_deref()
                .unwrap()
                .contains("mismatched types"),
            "{build:?}"
        );
        assert_eq!(build.file.as_deref(), Some("tests/broken.rs"));
        assert!(report.summary.error >= 1 && !report.all_passed());
    }
}

#[tokio::test]
async fn cargo_filter_and_failed_rerun() {
    require_tool("cargo");
    let project = fixture("cargo");
    let filtered = RunOptions {
        filter: Some("add_table".into()),
        ..with(PluginPolicy::Never)
    };
    let report = run_tests(project.path(), FW, &filtered)
        .await
        .expect("cargo runs")
        .report;
    assert_eq!(counts(&report), (2, 1, 0, 0, 3), "{:?}", report.tests);

    run_tests(project.path(), FW, &with(PluginPolicy::Never))
        .await
        .expect("full run");
    let runs = default_runs_dir(&project.path().canonicalize().unwrap());
    let FailedSelection::Tests(ids) = failed_selection(&runs, FW).expect("last run") else {
        panic!("expected failed tests to re-run");
    };
    for plugins in [PluginPolicy::Never, PluginPolicy::Auto] {
        let opts = RunOptions {
            selection: Selection::Tests(ids.clone()),
            ..with(plugins)
        };
        let report = run_tests(project.path(), FW, &opts)
            .await
            .expect("re-run")
            .report;
        assert_eq!(
            counts(&report),
            (0, 3, 0, 0, 3),
            "{plugins:?}: {:?}",
            report.tests
        );
    }
}

#[tokio::test]
async fn cargo_lists_tests_without_running_them() {
    require_tool("cargo");
    let project = fixture("cargo");
    for plugins in [PluginPolicy::Never, PluginPolicy::Auto] {
        let listing = list_tests(project.path(), FW, &with(plugins))
            .await
            .expect("cargo lists");
        let mut tests = listing.tests.clone();
        tests.sort();
        assert_eq!(tests.len(), 12, "{plugins:?}: {tests:?}");
        assert!(tests.contains(&"tests/strings.rs::shout_keeps_unicode".to_string()));
        assert!(tests.contains(&"src/lib.rs::tests::outer::inner::works_when_nested".to_string()));
    }
}
