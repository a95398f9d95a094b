//! node's built-in test runner on tests/fixtures/node-test: detection from `node --test`, the
//! counts node's own summary prints, ids, the name filter, `--failed`, listing and a timeout
//! that keeps what finished and names the hung test.

use crate::common::*;
use huddle_runners::run::{failed_selection, FailedSelection};
use huddle_runners::rundir::default_runs_dir;
use huddle_runners::{list_tests, run_tests, Framework, Outcome, Overrides, RunOptions, Selection};
use std::time::Duration;

const FW: Framework = Framework::NodeTest;

const EXPECTED: &[(&str, Outcome)] = &[
    ("test/math.test.js::adds two numbers", Outcome::Passed),
    ("::multiplies with a wrong expectation", Outcome::Failed),
    ("::divides by zero and throws", Outcome::Failed),
    ("::is not ready yet", Outcome::Skipped),
    ("::handles negative zero", Outcome::Skipped),
    (
        "test/math.test.js::outer::inner::works when nested",
        Outcome::Passed,
    ),
    ("test/math.test.js::a table of cases", Outcome::Failed),
    ("::a table of cases::add(1, 1) = 2", Outcome::Passed),
    ("::a table of cases::add(2, 2) = 5", Outcome::Failed),
    ("::héllo wörld ✓ 日本語", Outcome::Passed),
    ("::slow when FIXTURE_SLOW is set", Outcome::Passed),
    ("test/broken.test.js", Outcome::Error),
];

/// node's own `# pass`, `# fail`, `# skipped` + `# todo` and `# tests` lines.
fn own_summary(project: &std::path::Path) -> (usize, usize, usize, usize) {
    let out = std::process::Command::new("node")
        .arg("--test")
        .arg("--test-reporter=tap")
        .current_dir(project)
        .output()
        .expect("node --test runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let n = |what: &str| -> usize {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("# {what} ")))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no `# {what}` in:\n{text}"))
    };
    (n("pass"), n("fail"), n("skipped") + n("todo"), n("tests"))
}

#[tokio::test]
async fn node_test_counts_as_node_does() {
    require_tool("node");
    let project = fixture("node-test");
    let found = huddle_runners::detect::detect(project.path(), &Overrides::default()).unwrap();
    assert_eq!(found.framework, FW, "{}", found.explain());
    let report = run_tests(project.path(), FW, &opts())
        .await
        .expect("runs")
        .report;
    assert_outcomes(&report, EXPECTED);
    assert_eq!(counts(&report), (5, 4, 1, 2, 12), "{:?}", report.summary);
    let s = report.summary;
    assert_eq!(
        own_summary(project.path()),
        (s.passed, s.failed + s.error, s.skipped, s.total),
        "node's own summary (its `fail` holds the file that does not load)"
    );
    assert!(longrepr(&report, "::multiplies with a wrong expectation").contains("6 !== 7"));
    assert!(longrepr(&report, "test/broken.test.js").contains("does-not-exist"));

    let listed = list_tests(project.path(), FW, &opts())
        .await
        .expect("lists");
    let without_subtests: Vec<String> = test_ids(&report)
        .into_iter()
        .filter(|id| !id.contains("::a table of cases::"))
        .collect();
    assert_eq!(
        sorted(listed.tests),
        without_subtests,
        "subtests exist only once their parent runs"
    );
    assert_eq!(listed.errors.len(), 1, "{:?}", listed.errors);
}

#[tokio::test]
async fn node_test_filter_and_failed_rerun() {
    require_tool("node");
    let project = fixture("node-test");
    let filtered = RunOptions {
        filter: Some("nested".into()),
        selection: Selection::Paths(vec!["test/math.test.js".into()]),
        ..opts()
    };
    let report = run_tests(project.path(), FW, &filtered)
        .await
        .expect("runs")
        .report;
    assert_eq!(outcome(&report, "::works when nested"), Outcome::Passed);
    assert_eq!(
        report.summary.failed + report.summary.error,
        0,
        "{:#?}",
        report.tests
    );

    run_tests(project.path(), FW, &opts()).await.expect("runs");
    let FailedSelection::Tests(ids) =
        failed_selection(&default_runs_dir(project.path()), FW).expect("last run")
    else {
        panic!("expected failed tests")
    };
    let ids: Vec<String> = ids.into_iter().filter(|i| i.contains("::")).collect();
    let rerun = RunOptions {
        selection: Selection::Tests(ids),
        ..opts()
    };
    let report = run_tests(project.path(), FW, &rerun)
        .await
        .expect("reruns")
        .report;
    assert_eq!(
        outcome(&report, "::multiplies with a wrong expectation"),
        Outcome::Failed
    );
    assert_eq!(outcome(&report, "::adds two numbers"), Outcome::Skipped);
}

#[tokio::test]
async fn node_test_timeout_keeps_what_finished_and_names_the_hung_test() {
    require_tool("node");
    let project = fixture("node-test");
    let opts = RunOptions {
        timeout: Duration::from_secs(30),
        kill_grace: Duration::from_secs(3),
        selection: Selection::Paths(vec!["test/math.test.js".into()]),
        env: vec![
            ("FIXTURE_SLOW".into(), "1".into()),
            (
                "FIXTURE_PID_FILE".into(),
                project.path().join("pid").display().to_string(),
            ),
        ],
        ..opts()
    };
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("runs")
        .report;
    assert!(report.timed_out);
    assert_eq!(outcome(&report, "::adds two numbers"), Outcome::Passed);
    assert_eq!(
        outcome(&report, "::divides by zero and throws"),
        Outcome::Failed
    );
    let text = longrepr(&report, "[TIMEOUT]");
    assert!(
        text.contains(
            "Still running when it was stopped: the test after test/math.test.js::héllo wörld ✓ 日本語 in test/math.test.js"
        ),
        "{text}"
    );
}
