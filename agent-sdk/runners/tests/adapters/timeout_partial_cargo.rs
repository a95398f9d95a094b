//! A cargo run stopped at its timeout keeps the tests that finished and names the one that
//! hung, under `cargo test` (libtest's lines, and the running binary's own `--list`) and
//! under nextest (its report written at huddle's SIGTERM): the cargo fixture's whole suite
//! with its slow unit test hanging.

use crate::cargo::own_target;
use crate::common::*;
use huddle_runners::{run_tests, Framework, Outcome, PluginPolicy, Report, RunOptions};
use std::time::Duration;

/// Long enough for the prebuilt suite to reach its slow test on a loaded 2-core machine.
const TIMEOUT: Duration = Duration::from_secs(30);

const HUNG: &str = "src/lib.rs::tests::slow_when_fixture_slow_is_set";

async fn timed_out_run(plugins: PluginPolicy) -> (tempfile::TempDir, Report) {
    let project = fixture("cargo");
    let target = own_target(project.path());
    // Built first (nextest builds as `cargo test` does), so the timeout measures the tests,
    // not the build of a fresh copy.
    let built = std::process::Command::new("cargo")
        .args(["test", "--no-run", "--quiet"])
        .env(&target.0, &target.1)
        .current_dir(project.path())
        .status()
        .expect("prebuild starts");
    assert!(built.success(), "prebuild failed");
    let pid_file = project.path().join("grandchild.pid");
    let opts = RunOptions {
        timeout: TIMEOUT,
        kill_grace: Duration::from_secs(5),
        plugins,
        env: vec![
            target,
            ("FIXTURE_SLOW".into(), "1".into()),
            ("FIXTURE_PID_FILE".into(), pid_file.display().to_string()),
        ],
        // The grandchild's PID must be the host's, and the shared target directory writable.
        sandbox: huddle_runners::Sandbox::Off,
        ..opts()
    };
    let report = run_tests(project.path(), Framework::Cargo, &opts)
        .await
        .expect("the run is made")
        .report;
    assert!(report.timed_out, "timed out");
    assert_eq!(report.exitcode, 124);
    (project, report)
}

fn assert_named(report: &Report) {
    let text = longrepr(report, "[TIMEOUT]");
    assert!(
        text.contains(&format!("Still running when it was stopped: {HUNG}.")),
        "{text}"
    );
    assert!(!report.tests.iter().any(|t| t.nodeid == HUNG));
    assert!(!report.tests.iter().any(|t| t.nodeid == "[crash]"));
}

#[tokio::test]
async fn cargo_test_keeps_what_finished_and_names_the_hung_test() {
    require_tool("cargo");
    let (_project, report) = timed_out_run(PluginPolicy::Never).await;
    // The library's unit tests other than the slow one finished (libtest runs them in
    // parallel); cargo runs the integration and doc tests after it, so they never started.
    assert_eq!(
        outcome(&report, "src/lib.rs::tests::adds_two_numbers"),
        Outcome::Passed
    );
    assert_eq!(
        outcome(&report, "src/lib.rs::tests::divides_by_zero_and_panics"),
        Outcome::Failed
    );
    assert_eq!(
        outcome(&report, "src/lib.rs::tests::not_ready"),
        Outcome::Skipped
    );
    // 6 passed, 3 failed, 1 ignored, and the [TIMEOUT] entry.
    assert_eq!(counts(&report), (6, 3, 1, 1, 11), "{:#?}", report.tests);
    assert_named(&report);
}

#[tokio::test]
async fn nextest_keeps_what_finished_and_names_the_hung_test() {
    require_tool("cargo-nextest");
    let (_project, report) = timed_out_run(PluginPolicy::Require).await;
    // nextest runs every binary's tests side by side: all but the slow one finished,
    // the integration tests included (its report leaves out ignored tests).
    assert_eq!(
        outcome(&report, "tests/strings.rs::shout_keeps_unicode"),
        Outcome::Passed
    );
    assert_eq!(
        outcome(&report, "src/lib.rs::tests::divides_by_zero_and_panics"),
        Outcome::Failed
    );
    assert!(longrepr(&report, "::divides_by_zero_and_panics").contains("division by zero"));
    assert_eq!(counts(&report), (8, 3, 1, 0, 12), "{:#?}", report.tests);
    assert_named(&report);
}
