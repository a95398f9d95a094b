//! A run stopped at its timeout keeps the results that came in before the kill and names the
//! test that was running: pytest through huddle's reporter, jest and vitest through huddle's
//! progress reporters, mocha through huddle's subclass of its json reporter, go from its
//! event stream (a test with a `run` event and no end). Whole-suite runs of the fixtures with
//! the slow test hanging (cargo: `timeout_partial_cargo.rs`).

use crate::common::*;
use huddle_runners::{run_tests, Framework, Outcome, Report, RunOptions};
use std::time::Duration;

/// Long enough for either runner to reach its slow test on a loaded 2-core machine.
const TIMEOUT: Duration = Duration::from_secs(30);

async fn timed_out_run(fixture_name: &str, fw: Framework) -> (tempfile::TempDir, Report) {
    let project = fixture(fixture_name);
    let pid_file = project.path().join("grandchild.pid");
    let opts = RunOptions {
        timeout: TIMEOUT,
        kill_grace: Duration::from_secs(3),
        env: vec![
            ("FIXTURE_SLOW".into(), "1".into()),
            ("FIXTURE_PID_FILE".into(), pid_file.display().to_string()),
        ],
        ..opts()
    };
    let report = run_tests(project.path(), fw, &opts)
        .await
        .expect("the run is made")
        .report;
    assert!(report.timed_out, "{fw}: timed out");
    assert_eq!(report.exitcode, 124);
    (project, report)
}

fn timeout_text(report: &Report) -> &str {
    longrepr(report, "[TIMEOUT]")
}

#[tokio::test]
async fn pytest_keeps_what_finished_and_names_the_hung_test() {
    require_pytest();
    let (_project, report) = timed_out_run("pytest", Framework::Pytest).await;
    // Everything in test_broken.py and test_calc.py before the slow test ran and counts.
    assert_eq!(
        outcome(&report, "tests/test_calc.py::test_adds"),
        Outcome::Passed
    );
    assert_eq!(
        outcome(&report, "::test_multiplies_with_a_wrong_expectation"),
        Outcome::Failed
    );
    assert_eq!(outcome(&report, "tests/test_broken.py"), Outcome::Error);
    let text = timeout_text(&report);
    assert!(
        text.contains("Still running when it was stopped: tests/test_calc.py::test_slow_when_fixture_slow_is_set"),
        "{text}"
    );
    assert!(!report
        .tests
        .iter()
        .any(|t| t.nodeid.ends_with("::test_slow_when_fixture_slow_is_set")));
}

#[tokio::test]
async fn jest_keeps_what_finished_and_names_the_hung_test() {
    require_tool("node");
    let (_project, report) = timed_out_run("jest", Framework::Jest).await;
    // math.test.js ran up to its slow (last) test: its 8 earlier tests count, with jest's
    // outcomes and messages. Whether strings.test.js and broken.test.js ran first depends on
    // jest's worker count (on 2 cores it runs the files one after another).
    assert_eq!(
        outcome(&report, "src/math.test.js::adds two numbers"),
        Outcome::Passed
    );
    assert_eq!(
        outcome(&report, "::divides by zero and throws"),
        Outcome::Failed
    );
    assert_eq!(outcome(&report, "::add(2, 3) = 6"), Outcome::Failed);
    assert_eq!(
        outcome(&report, "::outer::inner::works when nested"),
        Outcome::Passed
    );
    assert!(longrepr(&report, "::divides by zero and throws").contains("division by zero"));
    let math = report
        .tests
        .iter()
        .filter(|t| t.nodeid.starts_with("src/math.test.js::") && t.outcome != Outcome::Skipped)
        .count();
    assert_eq!(math, 8, "{:#?}", report.tests);
    let text = timeout_text(&report);
    assert!(
        text.contains(
            "Still running when it was stopped: src/math.test.js::slow when FIXTURE_SLOW is set"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn vitest_keeps_what_finished_and_names_the_hung_test() {
    require_tool("node");
    let (_project, report) = timed_out_run("vitest", Framework::Vitest).await;
    // math.test.js ran up to its slow (last) test: its 8 earlier tests count, with vitest's
    // outcomes and messages (huddle's progress reporter beside vitest's json one).
    assert_eq!(
        outcome(&report, "src/math.test.js::adds two numbers"),
        Outcome::Passed
    );
    assert_eq!(
        outcome(&report, "::divides by zero and throws"),
        Outcome::Failed
    );
    assert_eq!(
        outcome(&report, "::outer::inner::works when nested"),
        Outcome::Passed
    );
    assert!(longrepr(&report, "::divides by zero and throws").contains("division by zero"));
    let math = report
        .tests
        .iter()
        .filter(|t| t.nodeid.starts_with("src/math.test.js::") && t.outcome != Outcome::Skipped)
        .count();
    assert_eq!(math, 8, "{:#?}", report.tests);
    // The slow test's start is the last event before the hang, and vitest 3.2 may drop it
    // (see the fixture's pause): when a test is named, it is the slow one and only it.
    let text = timeout_text(&report);
    if text.contains("Still running") {
        assert!(
            text.contains(
                "Still running when it was stopped: src/math.test.js::slow when FIXTURE_SLOW is \
                 set. "
            ),
            "{text}"
        );
    }
}

#[tokio::test]
async fn mocha_keeps_what_finished_and_names_the_hung_test() {
    require_tool("node");
    let (_project, report) = timed_out_run("mocha", Framework::Mocha).await;
    // mocha runs the root suite's tests (every file's top-level `it`, in load order) before
    // any describe block, so math.spec.js's top-level tests before the slow one finished:
    // 2 passed, 2 failed, 1 pending; the describe blocks and strings.spec.js never started.
    assert_eq!(
        outcome(&report, "test/math.spec.js::adds two numbers"),
        Outcome::Passed
    );
    assert_eq!(
        outcome(&report, "::divides by zero and throws"),
        Outcome::Failed
    );
    assert_eq!(
        outcome(&report, "test/math.spec.js::is not ready yet"),
        Outcome::Skipped
    );
    assert!(longrepr(&report, "::divides by zero and throws").contains("division by zero"));
    assert_eq!(counts(&report), (2, 2, 1, 1, 6), "{:#?}", report.tests);
    let text = timeout_text(&report);
    assert!(
        text.contains(
            "Still running when it was stopped: test/math.spec.js::slow when FIXTURE_SLOW is set"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn go_keeps_what_finished_and_names_the_hung_test() {
    require_tool("go");
    let project = fixture("go");
    // Built first, so the timeout measures the tests, not the build.
    let built = std::process::Command::new("go")
        .args(["test", "-count=1", "-run=^$", "./calc"])
        .current_dir(project.path())
        .status()
        .expect("go builds");
    assert!(built.success());
    let pid_file = project.path().join("grandchild.pid");
    let opts = RunOptions {
        timeout: TIMEOUT,
        kill_grace: Duration::from_secs(3),
        selection: huddle_runners::Selection::Paths(vec!["./calc".into()]),
        env: vec![
            ("FIXTURE_SLOW".into(), "1".into()),
            ("FIXTURE_PID_FILE".into(), pid_file.display().to_string()),
        ],
        ..opts()
    };
    let report = run_tests(project.path(), Framework::Go, &opts)
        .await
        .expect("the run is made")
        .report;
    assert!(report.timed_out);
    assert_eq!(
        outcome(&report, "example.com/huddlefixture/calc::TestAdd"),
        Outcome::Passed
    );
    assert_eq!(
        outcome(&report, "calc::TestMultiplyWithAWrongExpectation"),
        Outcome::Failed
    );
    assert!(!report
        .tests
        .iter()
        .any(|t| t.nodeid.ends_with("::TestSlow")));
    let text = timeout_text(&report);
    assert!(
        text.contains(
            "Still running when it was stopped: example.com/huddlefixture/calc::TestSlow."
        ),
        "{text}"
    );
}
