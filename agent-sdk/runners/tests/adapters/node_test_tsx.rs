//! node:test on TypeScript through a loader (tests/fixtures/node-test-tsx): the test script
//! `node --import tsx/esm --test src/**/*.test.ts` reaches node with `--import`'s value and
//! with its glob expanded as `npm test`'s sh expands it (node 20 takes the glob literally;
//! sh has no globstar, so `src/top.test.ts` is not run). Counts agree with `npm test`'s own
//! summary; a filter, a `--failed` re-run and a listing keep the loader.

use crate::common::*;
use huddle_runners::run::{failed_selection, FailedSelection};
use huddle_runners::rundir::default_runs_dir;
use huddle_runners::{list_tests, run_tests, Framework, Outcome, Overrides, RunOptions, Selection};
use std::path::Path;

const FW: Framework = Framework::NodeTest;

const EXPECTED: &[(&str, Outcome)] = &[
    ("src/lib/math.test.ts::add::add(1, 1) = 2", Outcome::Passed),
    ("src/lib/math.test.ts::add::add(2, 2) = 4", Outcome::Passed),
    (
        "src/lib/math.test.ts::mean of nothing is zero (wrong on purpose)",
        Outcome::Failed,
    ),
    ("src/text/shout.test.ts::shouts", Outcome::Passed),
    ("src/text/shout.test.ts::whispers", Outcome::Skipped),
];

/// `npm test`'s own `# pass`, `# fail`, `# skipped` + `# todo` and `# tests` (the script run
/// by npm through sh, as a user runs it).
fn npm_test_summary(project: &Path) -> (usize, usize, usize, usize) {
    let out = std::process::Command::new("npm")
        .arg("test")
        .env("NODE_OPTIONS", "--test-reporter=tap")
        .current_dir(project)
        .output()
        .expect("npm test runs");
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
async fn a_loader_and_a_shell_glob_reach_node() {
    require_tool("node");
    require_tool("npm");
    let copy = fixture("node-test-tsx");
    let project = copy.path();
    let found = huddle_runners::detect::detect(project, &Overrides::default()).unwrap();
    assert_eq!(found.framework, FW, "{}", found.explain());
    let report = run_tests(project, FW, &opts()).await.expect("runs").report;
    let command = report.command.join(" ");
    assert!(command.contains("--import tsx/esm --test"), "{command}");
    assert!(
        command.ends_with("src/lib/math.test.ts src/text/shout.test.ts"),
        "{command}"
    );
    assert_outcomes(&report, EXPECTED);
    assert_eq!(counts(&report), (3, 1, 0, 1, 5), "{:?}", report.summary);
    assert_eq!(
        npm_test_summary(project),
        (3, 1, 1, 5),
        "npm test's summary"
    );

    let filtered = RunOptions {
        filter: Some("shouts".into()),
        ..opts()
    };
    let report = run_tests(project, FW, &filtered)
        .await
        .expect("runs a filter")
        .report;
    let passed: Vec<_> = report
        .tests
        .iter()
        .filter(|t| t.outcome == Outcome::Passed)
        .map(|t| t.nodeid.as_str())
        .collect();
    assert_eq!(passed, ["src/text/shout.test.ts::shouts"]);
    assert_eq!(report.summary.error, 0, "{:#?}", report.tests);

    run_tests(project, FW, &opts()).await.expect("runs again");
    let FailedSelection::Tests(ids) =
        failed_selection(&default_runs_dir(project), FW).expect("last run")
    else {
        panic!("expected failed tests")
    };
    assert_eq!(
        ids,
        ["src/lib/math.test.ts::mean of nothing is zero (wrong on purpose)"]
    );
    let rerun = RunOptions {
        selection: Selection::Tests(ids),
        ..opts()
    };
    let report = run_tests(project, FW, &rerun).await.expect("reruns").report;
    assert_eq!(report.summary.failed, 1, "{:#?}", report.tests);
    assert_eq!(report.summary.error, 0, "{:#?}", report.tests);
    assert_eq!(report.summary.passed, 0, "{:#?}", report.tests);

    let listed = list_tests(project, FW, &opts()).await.expect("lists");
    assert!(listed.errors.is_empty(), "{:?}", listed.errors);
    assert_eq!(
        sorted(listed.tests),
        sorted(EXPECTED.iter().map(|(id, _)| id.to_string()).collect())
    );
}
