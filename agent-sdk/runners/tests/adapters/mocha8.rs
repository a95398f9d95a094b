//! mocha 8 through the runner layer: real mocha 8.4 on tests/fixtures/mocha8, the mocha
//! fixture's spec files on the old version. Its json reporter ignores `--reporter-option
//! output=FILE` and prints the report on stdout; it has no `--dry-run`.

use crate::common::*;
use huddle_runners::Selection;
use huddle_runners::{list_tests, run_tests, Framework, Outcome, RunOptions, RunnerError};

const FW: Framework = Framework::Mocha;

#[tokio::test]
async fn mocha8_reports_the_same_outcomes_as_current_mocha() {
    require_tool("node");
    let project = fixture("mocha8");
    let report = run_tests(project.path(), FW, &opts())
        .await
        .expect("mocha 8 runs")
        .report;
    assert_eq!(
        counts(&report),
        (8, 3, 0, 1, 12),
        "summary: {:?}",
        report.summary
    );
    assert_outcomes(&report, crate::mocha::EXPECTED);
    assert_eq!(
        report.exitcode, 3,
        "mocha exits with the number of failures"
    );
    assert!(longrepr(&report, "::multiplies with a wrong expectation").contains("6 !== 7"));
}

#[tokio::test]
async fn mocha8_counts_equal_what_mocha_8_itself_prints() {
    require_tool("node");
    let project = fixture("mocha8");
    let direct = std::process::Command::new("node")
        .args(["node_modules/.bin/mocha", "--reporter=dot"])
        .current_dir(project.path())
        .output()
        .expect("mocha 8 runs directly");
    let text = String::from_utf8_lossy(&direct.stdout);
    for line in ["8 passing", "1 pending", "3 failing"] {
        assert!(text.contains(line), "mocha 8 printed: {text}");
    }
    let report = run_tests(project.path(), FW, &opts())
        .await
        .expect("mocha 8 runs")
        .report;
    let s = report.summary;
    assert_eq!((s.passed, s.skipped, s.failed), (8, 1, 3));
}

#[tokio::test]
async fn mocha8_all_passing_run_is_not_zero_tests() {
    require_tool("node");
    let project = fixture("mocha8");
    // Exit 0 and the report only on stdout: once read as "0 tests".
    let opts = RunOptions {
        filter: Some("shout|whisper".into()),
        ..opts()
    };
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("mocha 8 runs")
        .report;
    assert_eq!(counts(&report), (2, 0, 0, 0, 2), "{:?}", report.tests);
    assert_eq!(report.exitcode, 0);
    assert!(report.all_passed());
}

#[tokio::test]
async fn mocha8_spec_that_fails_to_load_is_an_error_with_its_message() {
    require_tool("node");
    let project = fixture("mocha8");
    let opts = RunOptions {
        selection: Selection::Paths(vec!["load-error/broken.spec.js".into(), "test".into()]),
        ..opts()
    };
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("mocha 8 runs")
        .report;
    assert_eq!(counts(&report), (0, 0, 1, 0, 1), "{:?}", report.tests);
    assert_eq!(report.tests[0].nodeid, "load-error/broken.spec.js");
    assert!(longrepr(&report, "broken.spec.js").contains("Cannot find module './does-not-exist'"));
}

#[tokio::test]
async fn mocha8_run_without_a_report_is_an_error_naming_it() {
    crate::mocha::a_run_without_a_report_is_an_error_naming_it("mocha8").await;
}

#[tokio::test]
async fn mocha8_listing_is_refused_with_the_reason() {
    require_tool("node");
    let project = fixture("mocha8");
    let pid_file = project.path().join("slow.pid");
    let opts = RunOptions {
        env: vec![
            ("FIXTURE_SLOW".into(), "1".into()),
            ("FIXTURE_PID_FILE".into(), pid_file.display().to_string()),
        ],
        ..opts()
    };
    let err = list_tests(project.path(), FW, &opts)
        .await
        .expect_err("mocha 8 cannot list without running");
    assert!(matches!(err, RunnerError::Unsupported(_)), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("mocha 8.4") && text.contains("--dry-run") && text.contains("mocha 9"),
        "{text}"
    );
    assert_eq!(err.exit_code(), 2);
    assert!(!pid_file.exists(), "no test ran");
}

#[tokio::test]
async fn mocha8_failed_rerun_uses_the_report_on_stdout() {
    require_tool("node");
    let project = fixture("mocha8");
    let first = run_tests(project.path(), FW, &opts())
        .await
        .expect("first run")
        .report;
    let failed: Vec<String> = first
        .tests
        .iter()
        .filter(|t| t.outcome == Outcome::Failed)
        .map(|t| t.nodeid.clone())
        .collect();
    let opts = RunOptions {
        selection: Selection::Tests(failed),
        ..opts()
    };
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("re-run")
        .report;
    assert_eq!(counts(&report), (0, 3, 0, 0, 3), "{:?}", report.tests);
}
