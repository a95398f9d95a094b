//! A name filter that matches no test, for every framework: the run reports no test (or, for
//! jest and vitest, the tests their own summary counts as skipped), no `[runner]` error, and
//! whatever the runner itself answers — exit 0, or pytest's 5 ("no tests collected"). Files
//! that cannot load stay errors: a filter does not hide them.

use crate::common::*;
use huddle_runners::{run_tests, Framework, Outcome, PluginPolicy, Report, RunOptions, Selection};

const NOTHING: &str = "huddle_matches_nothing";

async fn filtered(
    name: &str,
    fw: Framework,
    selection: Selection,
    plugins: PluginPolicy,
) -> Report {
    let project = fixture(name);
    let mut env = Vec::new();
    if fw == Framework::Cargo {
        // Its own build: copies of one crate share artifact names in a shared target dir.
        env.push((
            "CARGO_TARGET_DIR".to_string(),
            project.path().join("target").display().to_string(),
        ));
    }
    let opts = RunOptions {
        filter: Some(NOTHING.into()),
        selection,
        plugins,
        env,
        ..opts()
    };
    run_tests(project.path(), fw, &opts)
        .await
        .unwrap_or_else(|e| panic!("{fw} runs: {e}"))
        .report
}

fn assert_nothing_ran(report: &Report, exit_code: i32, skipped: usize) {
    assert_eq!(
        counts(report),
        (0, 0, 0, skipped, skipped),
        "{}: {:?}",
        report.framework,
        report.tests
    );
    assert_eq!(report.exitcode, exit_code, "{}", report.framework);
    assert!(!report.timed_out);
}

#[tokio::test]
async fn pytest_no_match_is_its_no_tests_collected() {
    require_pytest();
    let report = filtered(
        "pytest-verbose",
        Framework::Pytest,
        Selection::All,
        PluginPolicy::Auto,
    )
    .await;
    assert_nothing_ran(&report, 5, 0);
    // A file that cannot be imported is still reported, filter or not.
    let report = filtered(
        "pytest",
        Framework::Pytest,
        Selection::All,
        PluginPolicy::Never,
    )
    .await;
    assert_outcomes(&report, &[("tests/test_broken.py", Outcome::Error)]);
}

#[tokio::test]
async fn jest_and_vitest_count_the_filtered_out_tests_as_skipped() {
    require_tool("node");
    for fw in [Framework::Jest, Framework::Vitest] {
        let sel = Selection::Paths(vec!["src/math.test.js".into()]);
        let report = filtered(fw.name(), fw, sel, PluginPolicy::Auto).await;
        // Their own summaries: "Tests: 10 skipped, 10 total".
        assert_nothing_ran(&report, 0, 10);
    }
    // vitest takes paths as file filters: none matching is "No test files found", exit 1,
    // unless --passWithNoTests, which a filtered run passes.
    let sel = Selection::Paths(vec!["src/nothing_here.test.js".into()]);
    let report = filtered("vitest", Framework::Vitest, sel, PluginPolicy::Auto).await;
    assert_nothing_ran(&report, 0, 0);
}

#[tokio::test]
async fn mocha_no_match_is_an_empty_run() {
    require_tool("node");
    let report = filtered(
        "mocha",
        Framework::Mocha,
        Selection::All,
        PluginPolicy::Auto,
    )
    .await;
    assert_nothing_ran(&report, 0, 0);
}

#[tokio::test]
async fn go_no_match_is_an_empty_run_but_a_broken_package_stays_broken() {
    require_tool("go");
    let sel = Selection::Paths(vec!["./calc".into(), "./strs".into()]);
    let report = filtered("go", Framework::Go, sel, PluginPolicy::Auto).await;
    assert_nothing_ran(&report, 0, 0);
    let report = filtered("go", Framework::Go, Selection::All, PluginPolicy::Auto).await;
    assert_outcomes(
        &report,
        &[("example.com/huddlefixture/broken", Outcome::Error)],
    );
}

#[tokio::test]
async fn cargo_test_no_match_is_an_empty_run() {
    require_tool("cargo");
    let report = filtered(
        "cargo",
        Framework::Cargo,
        Selection::All,
        PluginPolicy::Never,
    )
    .await;
    assert_nothing_ran(&report, 0, 0);
}

#[tokio::test]
async fn cargo_nextest_no_match_is_an_empty_run() {
    require_tool("cargo-nextest");
    // nextest alone would exit 4 ("no tests to run"); with a filter huddle passes
    // --no-tests=pass, and the doc tests beside it match nothing either.
    let report = filtered(
        "cargo",
        Framework::Cargo,
        Selection::All,
        PluginPolicy::Require,
    )
    .await;
    assert_nothing_ran(&report, 0, 0);
}
