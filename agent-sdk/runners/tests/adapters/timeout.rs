//! The timeout: each fixture's slow test (made slow by FIXTURE_SLOW) starts a grandchild
//! process and sleeps; the run must stop at the timeout with exit code 124, a `[TIMEOUT]`
//! error entry, and the grandchild dead — the whole process group was killed.

use crate::common::*;
use huddle_runners::{run_tests, Framework, Outcome, PluginPolicy, RunOptions, Selection};
use std::time::Duration;

/// Long enough for any runner to start and reach its slow test on a loaded 2-core machine;
/// the slow test itself sleeps for 600 s.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Compiles go and cargo fixtures first, so the timeout measures the slow test, not the
/// build of a fresh copy on a loaded machine.
fn prebuild(fixture_name: &str, dir: &std::path::Path) {
    let argv: &[&str] = match fixture_name {
        "go" => &["go", "test", "-count=1", "-run=^$", "./calc"],
        "cargo" => &["cargo", "test", "--no-run", "--quiet"],
        _ => return,
    };
    let status = std::process::Command::new(argv[0])
        .args(&argv[1..])
        .current_dir(dir)
        .status()
        .expect("prebuild starts");
    assert!(status.success(), "{argv:?} failed");
}

async fn times_out(
    fixture_name: &str,
    fw: Framework,
    selection: Selection,
    filter: &str,
    plugins: PluginPolicy,
) {
    let project = fixture(fixture_name);
    prebuild(fixture_name, project.path());
    let pid_file = project.path().join("grandchild.pid");
    let opts = RunOptions {
        timeout: TIMEOUT,
        kill_grace: Duration::from_secs(3),
        filter: Some(filter.into()),
        selection,
        plugins,
        env: vec![
            ("FIXTURE_SLOW".into(), "1".into()),
            ("FIXTURE_PID_FILE".into(), pid_file.display().to_string()),
        ],
        // The grandchild's PID must be the host's: a sandbox's PIDs are its namespace's.
        sandbox: huddle_runners::Sandbox::Off,
        ..opts()
    };
    let outcome = run_tests(project.path(), fw, &opts)
        .await
        .expect("the run is made");
    let report = &outcome.report;
    assert!(report.timed_out, "{fw}: timed out");
    assert_eq!(report.exitcode, 124, "{fw}: exit code");
    let timeout = report
        .tests
        .iter()
        .find(|t| t.nodeid == "[TIMEOUT]")
        .expect("a [TIMEOUT] entry");
    assert_eq!(timeout.outcome, Outcome::Error);
    assert!(timeout
        .longrepr
        .as_deref()
        .unwrap()
        .starts_with("[TIMEOUT]"));
    assert!(!report.all_passed());
    assert!(outcome.run_dir.join("report.json").is_file());
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap_or_else(|_| panic!("{fw}: the slow test did not start within {TIMEOUT:?}"))
        .trim()
        .parse()
        .expect("pid");
    assert!(
        wait_gone(pid).await,
        "{fw}: grandchild {pid} survived the timeout"
    );
}

#[tokio::test]
async fn pytest_timeout_kills_the_process_group() {
    require_pytest();
    let sel = Selection::Paths(vec!["tests/test_calc.py".into()]);
    times_out("pytest", Framework::Pytest, sel, "slow", PluginPolicy::Auto).await;
}

#[tokio::test]
async fn jest_timeout_kills_the_process_group() {
    require_tool("node");
    let sel = Selection::Paths(vec!["src/math.test.js".into()]);
    times_out("jest", Framework::Jest, sel, "slow", PluginPolicy::Auto).await;
}

#[tokio::test]
async fn vitest_timeout_kills_the_process_group() {
    require_tool("node");
    let sel = Selection::Paths(vec!["src/math.test.js".into()]);
    times_out("vitest", Framework::Vitest, sel, "slow", PluginPolicy::Auto).await;
}

#[tokio::test]
async fn mocha_timeout_kills_the_process_group() {
    require_tool("node");
    times_out(
        "mocha",
        Framework::Mocha,
        Selection::All,
        "slow",
        PluginPolicy::Auto,
    )
    .await;
}

#[tokio::test]
async fn go_timeout_kills_the_process_group() {
    require_tool("go");
    let sel = Selection::Paths(vec!["./calc".into()]);
    times_out("go", Framework::Go, sel, "TestSlow", PluginPolicy::Auto).await;
}

#[tokio::test]
async fn cargo_test_timeout_kills_the_process_group() {
    require_tool("cargo");
    times_out(
        "cargo",
        Framework::Cargo,
        Selection::All,
        "slow",
        PluginPolicy::Never,
    )
    .await;
}

#[tokio::test]
async fn cargo_nextest_timeout_kills_the_process_group() {
    require_tool("cargo-nextest");
    times_out(
        "cargo",
        Framework::Cargo,
        Selection::All,
        "slow",
        PluginPolicy::Require,
    )
    .await;
}
