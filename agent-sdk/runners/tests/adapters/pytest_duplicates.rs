//! pytest results that share an id (tests/fixtures/pytest-duplicates): a parametrized case
//! that fails and whose fixture then fails in teardown is two JUnit testcases named
//! `test_posts[2]`, which huddle tells apart as `test_posts[2]` and `test_posts[2] [2]`. A
//! `--failed` re-run hands pytest the underlying node id once, never the ` [2]` suffix (pytest
//! would find no such test and exit 4).

use crate::common::*;
use huddle_runners::run::{failed_selection, FailedSelection};
use huddle_runners::rundir::default_runs_dir;
use huddle_runners::{run_tests, Framework, Outcome, PluginPolicy, RunOptions, Selection};

const FW: Framework = Framework::Pytest;
const CASE: &str = "tests/test_ledger.py::test_posts[2]";

const EXPECTED: &[(&str, Outcome)] = &[
    ("tests/test_ledger.py::test_posts[1]", Outcome::Passed),
    ("tests/test_ledger.py::test_posts[2]", Outcome::Failed),
    ("tests/test_ledger.py::test_posts[2] [2]", Outcome::Error),
    ("tests/test_ledger.py::test_posts[3]", Outcome::Passed),
    (
        "tests/test_ledger.py::test_same_value[1_0]",
        Outcome::Passed,
    ),
    (
        "tests/test_ledger.py::test_same_value[1_1]",
        Outcome::Passed,
    ),
];

#[tokio::test]
async fn a_duplicate_is_rerun_by_its_node_id_once() {
    require_pytest();
    let project = fixture("pytest-duplicates");
    let junit = RunOptions {
        plugins: PluginPolicy::Never,
        ..opts()
    };
    let report = run_tests(project.path(), FW, &junit)
        .await
        .expect("pytest runs")
        .report;
    // pytest's own summary: `1 failed, 4 passed, 1 error`.
    assert_outcomes(&report, EXPECTED);

    let FailedSelection::Tests(ids) =
        failed_selection(&default_runs_dir(project.path()), FW).expect("last run")
    else {
        panic!("expected failed tests")
    };
    assert_eq!(ids, [CASE.to_string(), format!("{CASE} [2]")]);
    for plugins in [PluginPolicy::Never, PluginPolicy::Auto] {
        let rerun = RunOptions {
            selection: Selection::Tests(ids.clone()),
            plugins,
            ..opts()
        };
        let report = run_tests(project.path(), FW, &rerun)
            .await
            .expect("reruns")
            .report;
        let handed: Vec<_> = report
            .command
            .iter()
            .filter(|a| a.contains("test_posts"))
            .collect();
        assert_eq!(handed, [CASE], "{plugins:?}: {:?}", report.command);
        assert_eq!(report.exitcode, 1, "{plugins:?}: {:#?}", report.tests);
        assert!(
            report.tests.iter().all(|t| t.nodeid.starts_with(CASE)),
            "{plugins:?}: {:#?}",
            report.tests
        );
        assert_eq!(report.summary.failed, 1, "{plugins:?}: {:#?}", report.tests);
    }
}
