//! jest `projects` on tests/fixtures/jest-projects: one file run by two projects is two
//! suites, so the project goes into the id (`src/mode.test.js::[strict]::title`); one test
//! fails under one project only. Counts agree with jest's own summary; a listing and a
//! `--failed` re-run (through `--selectProjects`) keep the same ids.

use crate::common::*;
use crate::own_summary::own_summary;
use huddle_runners::run::{failed_selection, FailedSelection};
use huddle_runners::rundir::default_runs_dir;
use huddle_runners::{list_tests, run_tests, Framework, Outcome, RunOptions, Selection};

const FW: Framework = Framework::Jest;

const EXPECTED: &[(&str, Outcome)] = &[
    (
        "src/mode.test.js::[unit]::runs without the strict global",
        Outcome::Passed,
    ),
    ("src/mode.test.js::[unit]::always passes", Outcome::Passed),
    (
        "src/mode.test.js::[strict]::runs without the strict global",
        Outcome::Failed,
    ),
    ("src/mode.test.js::[strict]::always passes", Outcome::Passed),
];

#[tokio::test]
async fn each_project_has_its_own_ids() {
    require_tool("node");
    let project = fixture("jest-projects");
    let report = run_tests(project.path(), FW, &opts())
        .await
        .expect("jest runs")
        .report;
    assert_outcomes(&report, EXPECTED);
    assert_eq!(
        own_summary(project.path(), "jest"),
        (3, 1, 0, 4),
        "jest's own summary"
    );
    let listed = list_tests(project.path(), FW, &opts())
        .await
        .expect("lists");
    assert_eq!(sorted(listed.tests), test_ids(&report));
}

#[tokio::test]
async fn a_failure_in_one_project_is_rerun_in_that_project() {
    require_tool("node");
    let project = fixture("jest-projects");
    run_tests(project.path(), FW, &opts())
        .await
        .expect("jest runs");
    let FailedSelection::Tests(ids) =
        failed_selection(&default_runs_dir(project.path()), FW).expect("last run")
    else {
        panic!("expected failed tests")
    };
    assert_eq!(
        ids,
        ["src/mode.test.js::[strict]::runs without the strict global"]
    );
    let rerun = RunOptions {
        selection: Selection::Tests(ids),
        ..opts()
    };
    let report = run_tests(project.path(), FW, &rerun)
        .await
        .expect("reruns")
        .report;
    assert_eq!(
        outcome(&report, "::[strict]::runs without the strict global"),
        Outcome::Failed
    );
    assert!(
        !report.tests.iter().any(|t| t.nodeid.contains("[unit]")),
        "only the strict project runs: {:#?}",
        report.tests
    );
}

/// A run stopped at its timeout names the hung test in its project, and what finished keeps
/// its project in the id too (from huddle's progress lines, as a finished run's report). In
/// band: when two projects run one file at the same moment, its lines name no project.
#[tokio::test]
async fn a_timeout_names_the_hung_test_in_its_project() {
    require_tool("node");
    let project = fixture("jest-projects");
    // Hangs under the strict project only.
    std::fs::write(
        project.path().join("src/hang.test.js"),
        "test(\"hangs when strict\", async () => {\n  \
         if (globalThis.STRICT) await new Promise(() => setTimeout(() => {}, 600000));\n}, 700000);\n",
    )
    .unwrap();
    let opts = RunOptions {
        timeout: std::time::Duration::from_secs(30),
        kill_grace: std::time::Duration::from_secs(3),
        runner_args: vec!["--runInBand".into()],
        ..opts()
    };
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("jest runs")
        .report;
    assert!(report.timed_out);
    let text = longrepr(&report, "[TIMEOUT]");
    assert!(
        text.contains(
            "Still running when it was stopped: src/hang.test.js::[strict]::hangs when strict."
        ),
        "{text}"
    );
    for t in report.tests.iter().filter(|t| t.nodeid != "[TIMEOUT]") {
        assert!(
            t.nodeid.contains("::[unit]::") || t.nodeid.contains("::[strict]::"),
            "{}",
            t.nodeid
        );
    }
}
