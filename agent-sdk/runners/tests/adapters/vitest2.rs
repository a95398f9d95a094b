//! vitest 2.1 in a pnpm workspace member (tests/fixtures/vitest2-pnpm): vitest 2 rejects
//! options vitest 3 added (`--includeTaskLocation` is "Unknown option" there, before any
//! report is written), so huddle passes only what the installed version accepts. A whole run,
//! a filter, a `--failed` re-run and a listing all agree with vitest's own summary.

use crate::common::*;
use crate::own_summary::own_summary;
use huddle_runners::run::{failed_selection, FailedSelection};
use huddle_runners::rundir::default_runs_dir;
use huddle_runners::{list_tests, run_tests, Framework, Outcome, RunOptions, Selection};

const FW: Framework = Framework::Vitest;
const MEMBER: &str = "packages/web";

const EXPECTED: &[(&str, Outcome)] = &[
    ("src/total.test.js::total::adds a list", Outcome::Passed),
    (
        "src/total.test.js::total::adds an empty list (wrong on purpose)",
        Outcome::Failed,
    ),
    ("src/total.test.js::total::adds strings", Outcome::Skipped),
    ("src/total.test.js::adds one number", Outcome::Passed),
];

fn installed_vitest_version() -> String {
    let pkg = fixture_source("vitest2-pnpm")
        .join(MEMBER)
        .join("node_modules/vitest/package.json");
    let text = std::fs::read_to_string(&pkg)
        .unwrap_or_else(|e| panic!("{}: {e}: run scripts/install-test-deps", pkg.display()));
    let json: serde_json::Value = serde_json::from_str(&text).expect("package.json");
    json["version"].as_str().expect("version").to_string()
}

#[tokio::test]
async fn vitest_2_runs_filters_reruns_and_lists() {
    require_tool("node");
    assert!(
        installed_vitest_version().starts_with("2.1."),
        "the fixture must run vitest 2.1"
    );
    let copy = fixture("vitest2-pnpm");
    let project = copy.path().join(MEMBER);
    let report = run_tests(&project, FW, &opts())
        .await
        .expect("vitest runs")
        .report;
    assert!(
        !report.command.iter().any(|a| a == "--includeTaskLocation"),
        "vitest 2 rejects --includeTaskLocation: {:?}",
        report.command
    );
    assert_outcomes(&report, EXPECTED);
    assert_eq!(own_summary(&project, "vitest"), (2, 1, 1, 4));

    let filtered = RunOptions {
        filter: Some("one number".into()),
        ..opts()
    };
    let report = run_tests(&project, FW, &filtered)
        .await
        .expect("vitest runs a filter")
        .report;
    let ran: Vec<_> = report
        .tests
        .iter()
        .filter(|t| t.outcome != Outcome::Skipped)
        .map(|t| t.nodeid.as_str())
        .collect();
    assert_eq!(ran, ["src/total.test.js::adds one number"]);
    assert_eq!(report.summary.error, 0, "{:#?}", report.tests);

    run_tests(&project, FW, &opts()).await.expect("runs again");
    let FailedSelection::Tests(ids) =
        failed_selection(&default_runs_dir(&project), FW).expect("last run")
    else {
        panic!("expected failed tests")
    };
    assert_eq!(
        ids,
        ["src/total.test.js::total::adds an empty list (wrong on purpose)"]
    );
    let rerun = RunOptions {
        selection: Selection::Tests(ids),
        ..opts()
    };
    let report = run_tests(&project, FW, &rerun)
        .await
        .expect("reruns")
        .report;
    assert_eq!(report.summary.failed, 1, "{:#?}", report.tests);
    assert_eq!(report.summary.error, 0, "{:#?}", report.tests);
    assert_eq!(report.summary.passed, 0, "{:#?}", report.tests);

    let listed = list_tests(&project, FW, &opts()).await.expect("lists");
    assert_eq!(
        sorted(listed.tests),
        sorted(EXPECTED.iter().map(|(id, _)| id.to_string()).collect())
    );
}
