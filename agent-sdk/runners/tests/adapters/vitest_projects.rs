//! vitest `projects` on tests/fixtures/vitest-projects: one file run by two projects is two
//! suites, so the project goes into the id (`src/mode.test.js::[strict]::title`), as for jest
//! projects; one test fails under one project only. Counts agree with vitest's own summary;
//! a listing and a `--failed` re-run (through `--project`) keep the same ids.

use crate::common::*;
use crate::own_summary::own_summary;
use huddle_runners::run::{failed_selection, FailedSelection};
use huddle_runners::rundir::default_runs_dir;
use huddle_runners::{list_tests, run_tests, Framework, Outcome, RunOptions, Selection};

const FW: Framework = Framework::Vitest;

const EXPECTED: &[(&str, Outcome)] = &[
    (
        "src/mode.test.js::[unit]::runs without the strict variable",
        Outcome::Passed,
    ),
    (
        "src/mode.test.js::[unit]::math::always passes",
        Outcome::Passed,
    ),
    (
        "src/mode.test.js::[strict]::runs without the strict variable",
        Outcome::Failed,
    ),
    (
        "src/mode.test.js::[strict]::math::always passes",
        Outcome::Passed,
    ),
];

#[tokio::test]
async fn each_project_has_its_own_ids() {
    require_tool("node");
    let project = fixture("vitest-projects");
    let report = run_tests(project.path(), FW, &opts())
        .await
        .expect("vitest runs")
        .report;
    assert_outcomes(&report, EXPECTED);
    assert_eq!(
        own_summary(project.path(), "vitest"),
        (3, 1, 0, 4),
        "vitest's own summary"
    );
    let listed = list_tests(project.path(), FW, &opts())
        .await
        .expect("lists");
    assert_eq!(sorted(listed.tests), test_ids(&report));
}

#[tokio::test]
async fn a_failure_in_one_project_is_rerun_in_that_project() {
    require_tool("node");
    let project = fixture("vitest-projects");
    run_tests(project.path(), FW, &opts())
        .await
        .expect("vitest runs");
    let FailedSelection::Tests(ids) =
        failed_selection(&default_runs_dir(project.path()), FW).expect("last run")
    else {
        panic!("expected failed tests")
    };
    assert_eq!(
        ids,
        ["src/mode.test.js::[strict]::runs without the strict variable"]
    );
    let rerun = RunOptions {
        selection: Selection::Tests(ids),
        ..opts()
    };
    let report = run_tests(project.path(), FW, &rerun)
        .await
        .expect("reruns")
        .report;
    // Only the strict project ran; vitest reports the file's other test as skipped, as its
    // own summary does (`Tests  1 failed | 1 skipped (2)`).
    assert_outcomes(
        &report,
        &[
            (
                "src/mode.test.js::[strict]::runs without the strict variable",
                Outcome::Failed,
            ),
            (
                "src/mode.test.js::[strict]::math::always passes",
                Outcome::Skipped,
            ),
        ],
    );
}

/// A filter picks from both projects; each match keeps its project's id.
#[tokio::test]
async fn a_filter_keeps_the_project_ids() {
    require_tool("node");
    let project = fixture("vitest-projects");
    let filtered = RunOptions {
        filter: Some("always".into()),
        ..opts()
    };
    let report = run_tests(project.path(), FW, &filtered)
        .await
        .expect("vitest runs")
        .report;
    let ran: Vec<&str> = report
        .tests
        .iter()
        .filter(|t| t.outcome != Outcome::Skipped)
        .map(|t| t.nodeid.as_str())
        .collect();
    assert_eq!(
        sorted(ran.iter().map(|s| s.to_string()).collect()),
        [
            "src/mode.test.js::[strict]::math::always passes",
            "src/mode.test.js::[unit]::math::always passes"
        ]
    );
}
