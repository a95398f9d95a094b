//! `huddle test` as a real process on a real pytest fixture: no daemon or token needed, the
//! global `--json` prints the report, `--explain` says what was detected, exit codes follow the
//! outcome.

use crate::common::{fixture, require_pytest};
use crate::secrets::{leaks, leaks_in_dir, write_leaky_pytest_project};
use huddle_runners::scrub::marker;
use serde_json::Value;

fn huddle_test(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_huddle"))
        .arg("test")
        .args(args)
        .env_remove("HUDDLE_TOKEN")
        .env_remove("HUDDLE_TEAM")
        .output()
        .expect("huddle runs")
}

#[test]
fn huddle_test_runs_the_suite_and_prints_the_report_with_json() {
    require_pytest();
    let project = fixture("pytest");
    let dir = project.path().to_str().unwrap();

    let explain = huddle_test(&["--project", dir, "--explain"]);
    assert_eq!(
        explain.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&explain.stderr)
    );
    assert!(String::from_utf8_lossy(&explain.stdout).contains("pytest"));

    let out = huddle_test(&["--project", dir, "--json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "failures exit 1: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("stdout is the JSON report");
    let s = &report["summary"];
    // The fixture's known outcomes (tests/fixtures/README.md).
    assert_eq!(
        (
            s["passed"].as_u64(),
            s["failed"].as_u64(),
            s["error"].as_u64(),
            s["skipped"].as_u64(),
            s["total"].as_u64()
        ),
        (Some(8), Some(3), Some(2), Some(1), Some(14))
    );
    assert_eq!(report["framework"], "pytest");

    let bad = huddle_test(&["--project", dir, "-k", "../etc"]);
    assert_eq!(
        bad.status.code(),
        Some(2),
        "a guarded filter is a usage error"
    );
}

#[test]
fn the_huddle_binary_prints_no_secret() {
    require_pytest();
    let project = tempfile::tempdir().unwrap();
    write_leaky_pytest_project(project.path());
    let dir = project.path().to_str().unwrap();
    let out = huddle_test(&["--project", dir, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(leaks(&stdout), Vec::<&str>::new(), "stdout: {stdout}");
    assert_eq!(leaks(&stderr), Vec::<&str>::new(), "stderr: {stderr}");
    let report: Value = serde_json::from_str(&stdout).expect("stdout is the JSON report");
    assert_eq!(report["summary"]["failed"], 2);
    assert!(stdout.contains(&marker("github-token")), "{stdout}");
    assert_eq!(
        leaks_in_dir(&project.path().join(".huddle/runs")),
        Vec::new()
    );
}

/// `huddle test` under a terminal (util-linux `script` gives it a pty): a live line while the
/// suite runs and a final line; with `--json`, neither.
#[test]
fn on_a_terminal_huddle_test_shows_a_live_line_and_stays_quiet_with_json() {
    require_pytest();
    let project = fixture("pytest");
    let dir = project.path().to_str().unwrap();
    let on_a_terminal = |extra: &str| {
        let command = format!(
            "'{}' test --project '{dir}' {extra}",
            env!("CARGO_BIN_EXE_huddle")
        );
        let out = std::process::Command::new("script")
            .args(["-qec", &command, "/dev/null"])
            .env_remove("HUDDLE_TOKEN")
            .env_remove("HUDDLE_TEAM")
            .output()
            .expect("util-linux `script` is required by this test: apt-get install bsdutils");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let human = on_a_terminal("");
    assert!(
        human.contains("huddle test: running the suite… "),
        "{human}"
    );
    // The counts as the run streamed them: the fixture's 12 tests that ran (1 of them an error
    // in setup) and 1 skipped are done; 3 failed, that error and the broken file failed.
    assert!(
        human.contains("huddle test: 13 done, 5 failed… "),
        "{human}"
    );
    assert!(
        human.contains("huddle test: 13 run, 3 failed, 2 errors in "),
        "{human}"
    );
    assert!(human.contains("(exit 1)"), "{human}");
    let json = on_a_terminal("--json");
    assert!(!json.contains("running the suite"), "{json}");
    assert!(!json.contains(" run, "), "{json}");
    assert!(
        json.contains("\"summary\""),
        "the report is still printed: {json}"
    );
}
