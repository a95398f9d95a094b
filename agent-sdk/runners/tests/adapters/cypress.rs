//! Cypress through the runner layer: the real `cypress` npm package (installed with
//! `CYPRESS_INSTALL_BINARY=0`) and its real CLI, which verifies and starts a stand-in
//! application (`CYPRESS_RUN_BINARY`, tests/fixtures/cypress/stand-in) that replays recorded
//! json-reporter results per spec. The browser and the app under test are what is not real.

use crate::common::*;
use huddle_runners::detect::{detect, Overrides};
use huddle_runners::run::{failed_selection, FailedSelection};
use huddle_runners::rundir::default_runs_dir;
use huddle_runners::{run_tests, Framework, Outcome, RunOptions, Selection};
use std::path::Path;

const FW: Framework = Framework::Cypress;

/// Cypress's CLI starts Xvfb on display :99 when DISPLAY is unset, and a second run at the
/// same time fails: the tests of this module run one at a time (nextest: the `cypress` group).
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const EXPECTED: &[(&str, Outcome)] = &[
    (
        "cypress/e2e/login.cy.js::Login::shows the form",
        Outcome::Passed,
    ),
    (
        "cypress/e2e/login.cy.js::Login::rejects a wrong password",
        Outcome::Failed,
    ),
    (
        "cypress/e2e/login.cy.js::Login::remembers the user",
        Outcome::Skipped,
    ),
    (
        "cypress/e2e/search.cy.js::Search::finds a product",
        Outcome::Passed,
    ),
    (
        "cypress/e2e/shop/cart.cy.js::Cart::adds an item",
        Outcome::Passed,
    ),
    (
        "cypress/e2e/shop/cart.cy.js::Cart checkout::applies a coupon",
        Outcome::Passed,
    ),
    (
        "cypress/e2e/shop/cart.cy.js::Cart checkout::charges tax",
        Outcome::Failed,
    ),
    (
        "cypress/e2e/shop/cart.cy.js::Cart checkout::shows the receipt",
        Outcome::Passed,
    ),
];

/// The run's options: the stand-in application in the project's copy.
fn cy_opts(project: &Path) -> RunOptions {
    let binary = project.join("stand-in/Cypress/Cypress");
    RunOptions {
        env: vec![(
            "CYPRESS_RUN_BINARY".to_string(),
            binary.to_string_lossy().into_owned(),
        )],
        ..opts()
    }
}

#[tokio::test]
async fn cypress_is_detected_run_and_counted_per_spec() {
    require_tool("node");
    require_tool("Xvfb");
    let _turn = ONE_AT_A_TIME.lock().await;
    let project = fixture("cypress");
    let detection = detect(project.path(), &Overrides::default()).expect("detects");
    assert_eq!(detection.framework, FW, "{}", detection.explain());
    let report = run_tests(project.path(), FW, &cy_opts(project.path()))
        .await
        .expect("cypress runs")
        .report;
    assert_outcomes(&report, EXPECTED);
    assert_eq!(counts(&report), (5, 2, 0, 1, 8));
    assert_eq!(
        report.exitcode, 2,
        "cypress exits with the number of failures"
    );
    assert!(longrepr(&report, "::charges tax").contains("to contain '8.00'"));
    // Passed on Cypress's own retry: counted as passed, and as flaky.
    assert_eq!(
        report.flaky,
        ["cypress/e2e/shop/cart.cy.js::Cart checkout::shows the receipt"]
    );
    assert_eq!(report.flaky_in_run, 1);
    let argv = report.command.join(" ");
    assert!(argv.contains("run --reporter json"), "{argv}");
}

#[tokio::test]
async fn a_filter_becomes_a_spec_glob() {
    require_tool("node");
    require_tool("Xvfb");
    let _turn = ONE_AT_A_TIME.lock().await;
    let project = fixture("cypress");
    let opts = RunOptions {
        filter: Some("login".into()),
        ..cy_opts(project.path())
    };
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("runs")
        .report;
    assert_eq!(counts(&report), (1, 1, 0, 1, 3), "{:?}", report.tests);
    assert!(
        report.command.iter().any(|a| a == "**/*login*"),
        "{:?}",
        report.command
    );
    assert!(report
        .tests
        .iter()
        .all(|t| t.nodeid.starts_with("cypress/e2e/login.cy.js::")));
}

#[tokio::test]
async fn failed_reruns_the_failed_tests_spec_files() {
    require_tool("node");
    require_tool("Xvfb");
    let _turn = ONE_AT_A_TIME.lock().await;
    let project = fixture("cypress");
    let cy = cy_opts(project.path());
    run_tests(project.path(), FW, &cy).await.expect("full run");
    let runs = default_runs_dir(&project.path().canonicalize().unwrap());
    let FailedSelection::Tests(ids) = failed_selection(&runs, FW).expect("last run") else {
        panic!("expected failed tests to re-run");
    };
    assert_eq!(ids.len(), 2, "{ids:?}");
    let opts = RunOptions {
        selection: Selection::Tests(ids),
        ..cy
    };
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("re-run")
        .report;
    // Both failing specs, whole (Cypress has no test-name filter); search.cy.js not at all.
    assert!(
        report
            .command
            .iter()
            .any(|a| a == "cypress/e2e/login.cy.js,cypress/e2e/shop/cart.cy.js"),
        "{:?}",
        report.command
    );
    assert_eq!(counts(&report), (4, 2, 0, 1, 7), "{:?}", report.tests);
}

#[tokio::test]
async fn a_filter_that_matches_no_spec_is_a_runner_error_with_cypress_words() {
    require_tool("node");
    require_tool("Xvfb");
    let _turn = ONE_AT_A_TIME.lock().await;
    let project = fixture("cypress");
    let opts = RunOptions {
        filter: Some("nothing-like-this".into()),
        ..cy_opts(project.path())
    };
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("runs")
        .report;
    assert_eq!(counts(&report), (0, 0, 1, 0, 1), "{:?}", report.tests);
    assert!(longrepr(&report, "[runner]").contains("no spec files were found"));
}

#[test]
fn a_unit_test_runner_outranks_cypress_and_cypress_alone_is_detected() {
    let dir = tempfile::tempdir().expect("temp dir");
    let write = |json: &str| std::fs::write(dir.path().join("package.json"), json).unwrap();
    let detected = || detect(dir.path(), &Overrides::default()).map(|d| d.framework);
    write(
        r#"{"devDependencies": {"jest": "29.7.0", "cypress": "15.3.0"}, "scripts": {"test": "jest", "e2e": "cypress run"}}"#,
    );
    assert_eq!(detected().unwrap(), Framework::Jest);
    write(r#"{"devDependencies": {"cypress": "15.3.0"}}"#);
    assert_eq!(detected().unwrap(), FW);
    write(r#"{"scripts": {"test": "start-server-and-test dev 3000 'cypress run'"}}"#);
    // Behind a server starter, quoted.
    assert_eq!(detected().unwrap(), FW);
}
