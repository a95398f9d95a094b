//! `huddle test` as a command (through `cli::execute`, which returns what the binary prints):
//! the human summary, `--json`, exit codes, `--failed`, `--list`, `--affected`, `--timeout`.

use crate::common::*;
use huddle_cli::test_command::{execute, TestArgs};
use huddle_runners::{Listing, PluginPolicy, Report};
use std::path::Path;

pub(crate) fn args(project: &Path) -> TestArgs {
    TestArgs {
        project: project.into(),
        framework: None,
        json: false,
        explain: false,
        list: false,
        failed: false,
        affected: false,
        base: "HEAD".into(),
        filter: None,
        timeout: 300,
        coverage: false,
        plugins: PluginPolicy::Auto,
        sandbox: huddle_runners::Sandbox::Auto,
        runs_dir: None,
        runner_args: Vec::new(),
        tiers: Default::default(),
    }
}

#[tokio::test]
async fn the_summary_lists_failures_first_and_exits_1() {
    require_pytest();
    let project = fixture("pytest");
    let out = execute(&args(project.path())).await;
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let first_failure = out
        .stdout
        .find("FAILED tests/test_calc.py::test_multiplies")
        .expect("failure shown");
    let counts = out
        .stdout
        .find("pytest: 8 passed, 3 failed, 2 errors, 1 skipped (14 total)")
        .expect("counts");
    assert!(first_failure < counts, "{}", out.stdout);
    assert!(
        out.stdout.contains("    E       assert 6 == 7"),
        "the message is shown: {}",
        out.stdout
    );
    assert!(
        out.stdout.contains("ERROR  tests/test_broken.py"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("run: ") && out.stdout.contains(".huddle/runs/"),
        "{}",
        out.stdout
    );
}

#[tokio::test]
async fn json_prints_the_report_itself() {
    require_tool("go");
    let project = fixture("go");
    let out = execute(&TestArgs {
        json: true,
        ..args(project.path())
    })
    .await;
    assert_eq!(out.code, 1);
    let report: Report = serde_json::from_str(&out.stdout).expect("stdout is the report");
    assert_eq!(
        (
            report.summary.passed,
            report.summary.failed,
            report.summary.error
        ),
        (19, 8, 1)
    );
}

#[tokio::test]
async fn all_passing_exits_0_and_failed_then_has_nothing_to_rerun() {
    require_tool("node");
    let project = fixture("mocha");
    let out = execute(&TestArgs {
        filter: Some("shout|whisper".into()),
        ..args(project.path())
    })
    .await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("mocha: 2 passed, 0 failed, 0 errors, 0 skipped (2 total)"),
        "{}",
        out.stdout
    );
    let out = execute(&TestArgs {
        failed: true,
        ..args(project.path())
    })
    .await;
    assert_eq!(out.code, 0);
    assert!(
        out.stdout.contains("no failures in the last run"),
        "{}",
        out.stdout
    );
}

#[tokio::test]
async fn failed_needs_a_previous_run_then_reruns_its_failures() {
    require_tool("cargo");
    let project = fixture("cargo");
    let failed = TestArgs {
        failed: true,
        plugins: PluginPolicy::Never,
        ..args(project.path())
    };
    let out = execute(&failed).await;
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no previous run"), "{}", out.stderr);
    assert_eq!(
        execute(&TestArgs {
            plugins: PluginPolicy::Never,
            ..args(project.path())
        })
        .await
        .code,
        1
    );
    let out = execute(&failed).await;
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.starts_with("re-running 4 failed test(s)\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("cargo: 0 passed, 4 failed, 0 errors, 0 skipped (4 total)"),
        "{}",
        out.stdout
    );
}

#[tokio::test]
async fn list_prints_tests_and_json_lists_them() {
    require_tool("go");
    let project = fixture("go");
    let out = execute(&TestArgs {
        list: true,
        ..args(project.path())
    })
    .await;
    assert!(
        out.stdout
            .lines()
            .any(|l| l == "example.com/huddlefixture/strs::TestShout"),
        "{}",
        out.stdout
    );
    assert_eq!(
        out.code, 1,
        "the broken package is a listing error: {}",
        out.stderr
    );
    assert!(
        out.stderr.contains("huddlefixture/broken"),
        "{}",
        out.stderr
    );
    let out = execute(&TestArgs {
        list: true,
        json: true,
        ..args(project.path())
    })
    .await;
    let listing: Listing = serde_json::from_str(&out.stdout).expect("JSON listing");
    // Top-level tests: calc 11, panics 1, strs 2 (go cannot list subtests without running).
    assert_eq!(listing.tests.len(), 14, "{:?}", listing.tests);
}

#[tokio::test]
async fn list_prints_jest_test_names_and_runner_arguments_reach_jest() {
    require_tool("node");
    let project = fixture("jest-config");
    let out = execute(&TestArgs {
        list: true,
        ..args(project.path())
    })
    .await;
    assert!(
        out.stdout
            .lines()
            .any(|l| l == "tests/unit/math.test.ts::outer::inner::works when nested"),
        "{}",
        out.stdout
    );
    assert_eq!(out.stdout.lines().count(), 11, "{}", out.stdout);
    assert_eq!(out.code, 1, "the broken suite is a listing error");
    assert!(
        out.stderr.contains("error: tests/unit/broken.test.ts: "),
        "{}",
        out.stderr
    );
    // The caller's `-- --testPathPatterns strings` narrows the run jest makes.
    let out = execute(&TestArgs {
        runner_args: vec!["--testPathPatterns".into(), "strings".into()],
        ..args(project.path())
    })
    .await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("jest: 2 passed, 0 failed, 0 errors, 0 skipped (2 total)"),
        "{}",
        out.stdout
    );
}

#[tokio::test]
async fn affected_says_what_it_mapped() {
    require_tool("go");
    let project = fixture("go");
    git_commit_all(project.path());
    let affected = TestArgs {
        affected: true,
        ..args(project.path())
    };
    let out = execute(&affected).await;
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "affected: nothing to run: no files changed\n")
    );
    std::fs::write(project.path().join("strs/extra.go"), "package strs\n").unwrap();
    let out = execute(&affected).await;
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stdout
            .starts_with("affected: strs/extra.go: package ./strs\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("go: 2 passed, 0 failed"),
        "{}",
        out.stdout
    );
}

#[tokio::test]
async fn timeout_exits_124_and_says_timeout() {
    require_pytest();
    let project = fixture("pytest");
    std::fs::write(
        project.path().join("tests/test_zz_sleep.py"),
        "import time\n\ndef test_sleeps_forever():\n    time.sleep(600)\n",
    )
    .unwrap();
    let out = execute(&TestArgs {
        timeout: 5,
        filter: Some("sleeps_forever".into()),
        ..args(project.path())
    })
    .await;
    assert_eq!(out.code, 124, "{}", out.stdout);
    assert!(out.stdout.contains("ERROR  [TIMEOUT]"), "{}", out.stdout);
    assert!(out.stdout.contains("exit code 124"), "{}", out.stdout);
}

#[tokio::test]
async fn a_filter_that_matches_nothing_exits_0_and_says_so() {
    require_tool("node");
    require_pytest();
    let nothing = Some("huddle_matches_nothing".to_string());
    let project = fixture("mocha");
    let out = execute(&TestArgs {
        filter: nothing.clone(),
        ..args(project.path())
    })
    .await;
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .starts_with("0 tests matched -k huddle_matches_nothing\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("mocha: 0 passed, 0 failed, 0 errors, 0 skipped (0 total)"),
        "{}",
        out.stdout
    );
    let out = execute(&TestArgs {
        filter: nothing.clone(),
        list: true,
        ..args(project.path())
    })
    .await;
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (0, "", "0 tests matched -k huddle_matches_nothing\n")
    );
    // pytest itself exits 5 ("no tests collected"); the report keeps that exit code.
    let project = fixture("pytest-verbose");
    let out = execute(&TestArgs {
        filter: nothing.clone(),
        json: true,
        ..args(project.path())
    })
    .await;
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let report: Report = serde_json::from_str(&out.stdout).expect("stdout is the report");
    assert_eq!((report.summary.total, report.exitcode), (0, 5));
    assert_eq!(out.stderr, "0 tests matched -k huddle_matches_nothing\n");
}

#[tokio::test]
async fn a_filter_does_not_hide_a_package_that_does_not_build() {
    require_tool("go");
    let project = fixture("go");
    let out = execute(&TestArgs {
        filter: Some("huddle_matches_nothing".into()),
        ..args(project.path())
    })
    .await;
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("ERROR  example.com/huddlefixture/broken"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("0 tests matched"), "{}", out.stdout);
}

#[tokio::test]
async fn no_tests_without_a_filter_is_still_a_failure() {
    require_tool("go");
    require_pytest();
    // A go module with code and no tests: go reports no test event and exits 0.
    let project = tempfile::tempdir().unwrap();
    std::fs::write(
        project.path().join("go.mod"),
        "module example.com/empty\n\ngo 1.19\n",
    )
    .unwrap();
    std::fs::write(project.path().join("empty.go"), "package empty\n").unwrap();
    let out = execute(&args(project.path())).await;
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.starts_with("no tests ran\n"), "{}", out.stdout);
    let out = execute(&TestArgs {
        list: true,
        ..args(project.path())
    })
    .await;
    assert_eq!((out.code, out.stderr.as_str()), (0, "no tests found\n"));
    // pytest with nothing to collect exits 5, which no test explains: a [runner] error.
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("pytest.ini"), "[pytest]\n").unwrap();
    let out = execute(&TestArgs {
        framework: Some("pytest".into()),
        ..args(project.path())
    })
    .await;
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(
            "ERROR  [runner]\n    the runner exited with code 5 without reporting any test"
        ),
        "{}",
        out.stdout
    );
}
