//! go test through the runner layer: real `go test -json` on tests/fixtures/go — every count
//! and outcome (every test event, parents of subtests included, checked against go's own
//! events), a package that does not build, a panic, the `-run` filter, `--failed` and listing.

use crate::common::*;
use huddle_runners::run::{failed_selection, FailedSelection};
use huddle_runners::rundir::default_runs_dir;
use huddle_runners::{list_tests, run_tests, Framework, Outcome, RunOptions, Selection};

const FW: Framework = Framework::Go;
const CALC: &str = "example.com/huddlefixture/calc::";

/// Every test event `go test -json` reports for the fixture, parents of subtests included.
const EXPECTED: &[(&str, Outcome)] = &[
    ("calc::TestAdd", Outcome::Passed),
    ("calc::TestMultiplyWithAWrongExpectation", Outcome::Failed),
    ("calc::TestDivideByZeroReturnsAnError", Outcome::Failed),
    ("calc::TestNotReady", Outcome::Skipped),
    ("calc::TestAddTable", Outcome::Failed),
    ("calc::TestAddTable/1+1", Outcome::Passed),
    ("calc::TestAddTable/2+2", Outcome::Passed),
    ("calc::TestAddTable/2+3", Outcome::Failed),
    ("calc::TestOuter", Outcome::Passed),
    ("calc::TestOuter/inner", Outcome::Passed),
    ("calc::TestOuter/inner/works_when_nested", Outcome::Passed),
    ("calc::TestUnicode", Outcome::Passed),
    ("calc::TestUnicode/héllo_wörld_✓_日本語", Outcome::Passed),
    ("calc::TestSlow", Outcome::Passed),
    ("calc::TestDivideTable", Outcome::Passed),
    ("calc::TestDivideTable/whole_division", Outcome::Passed),
    ("calc::TestDivideTable/rounds_toward_zero", Outcome::Passed),
    ("calc::TestDivideTable/by_zero_is_an_error", Outcome::Passed),
    ("calc::TestIdentities", Outcome::Failed),
    ("calc::TestIdentities/add", Outcome::Passed),
    ("calc::TestIdentities/add/zero_is_neutral", Outcome::Passed),
    ("calc::TestIdentities/multiply", Outcome::Failed),
    (
        "calc::TestIdentities/multiply/one_is_neutral",
        Outcome::Passed,
    ),
    (
        "calc::TestIdentities/multiply/zero_is_neutral",
        Outcome::Failed,
    ),
    ("calc::TestOnlyOnOtherPlatforms", Outcome::Passed),
    ("calc::TestOnlyOnOtherPlatforms/on_plan9", Outcome::Skipped),
    ("calc::TestOnlyOnOtherPlatforms/on_js", Outcome::Skipped),
    ("panics::TestPanics", Outcome::Failed),
    ("strs::TestShout", Outcome::Passed),
    ("strs::TestWhisper", Outcome::Passed),
    ("example.com/huddlefixture/broken", Outcome::Error),
];

/// (passed, failed, skipped) as go itself reports them: every `pass`, `fail` and `skip`
/// event that names a test in `go test -json ./...`.
fn counts_from_go_itself(project: &std::path::Path) -> (usize, usize, usize) {
    let out = std::process::Command::new("go")
        .args(["test", "-json", "./..."])
        .current_dir(project)
        .output()
        .expect("go test runs");
    let mut counts = (0, 0, 0);
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(event) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if event.get("Test").and_then(|t| t.as_str()).is_none() {
            continue;
        }
        match event["Action"].as_str() {
            Some("pass") => counts.0 += 1,
            Some("fail") => counts.1 += 1,
            Some("skip") => counts.2 += 1,
            _ => {}
        }
    }
    counts
}

#[tokio::test]
async fn go_reports_every_outcome_of_the_fixture() {
    require_tool("go");
    let project = fixture("go");
    let report = run_tests(project.path(), FW, &opts())
        .await
        .expect("go runs")
        .report;
    assert_eq!(
        counts(&report),
        (19, 8, 1, 3, 31),
        "summary: {:?}",
        report.summary
    );
    assert_outcomes(&report, EXPECTED);
    let s = report.summary;
    assert_eq!(
        counts_from_go_itself(project.path()),
        (s.passed, s.failed, s.skipped),
        "the same counts as go's own events"
    );
    assert!(longrepr(&report, "TestMultiplyWithAWrongExpectation")
        .contains("Multiply(2, 3) = 6, want 7"));
    assert!(longrepr(&report, "TestPanics").contains("assignment to entry in nil map"));
    assert!(longrepr(&report, "huddlefixture/broken").contains("doesnotexist"));
    let wrong = report
        .tests
        .iter()
        .find(|t| t.nodeid.ends_with("TestMultiplyWithAWrongExpectation"))
        .unwrap();
    assert_eq!(
        (wrong.file.as_deref(), wrong.lineno),
        (Some("calc/calc_test.go"), Some(21))
    );
    // A parent that failed through a subtest names it and points at it.
    let parent = report
        .tests
        .iter()
        .find(|t| t.nodeid == format!("{CALC}TestIdentities"))
        .unwrap();
    assert!(
        longrepr(&report, "::TestIdentities")
            .ends_with("failed subtests: TestIdentities/multiply/zero_is_neutral"),
        "{parent:?}"
    );
    assert_eq!(
        (parent.file.as_deref(), parent.lineno),
        (Some("calc/nested_test.go"), Some(53))
    );
}

#[tokio::test]
async fn go_filter_maps_to_run() {
    require_tool("go");
    let project = fixture("go");
    let opts = RunOptions {
        filter: Some("TestAddTable".into()),
        selection: Selection::Paths(vec!["./calc".into()]),
        ..opts()
    };
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("go runs")
        .report;
    // The parent and its three cases, as `go test -json -run TestAddTable` reports them.
    assert_eq!(counts(&report), (2, 2, 0, 0, 4), "{:?}", report.tests);
    assert_eq!(outcome(&report, "calc::TestAddTable"), Outcome::Failed);
}

#[tokio::test]
async fn go_failed_reruns_only_what_failed() {
    require_tool("go");
    let project = fixture("go");
    run_tests(project.path(), FW, &opts())
        .await
        .expect("first run");
    let runs = default_runs_dir(&project.path().canonicalize().unwrap());
    let FailedSelection::Tests(ids) = failed_selection(&runs, FW).expect("last run") else {
        panic!("expected failed tests to re-run");
    };
    let opts = RunOptions {
        selection: Selection::Tests(ids),
        ..opts()
    };
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("re-run")
        .report;
    // A subtest re-runs through its top-level test, with its passing siblings (one -run
    // pattern cannot pick subtests under several parents); the broken package stays broken.
    assert_eq!(counts(&report), (5, 8, 1, 0, 14), "{:?}", report.tests);
    assert_eq!(
        outcome(&report, &format!("{CALC}TestAddTable/2+3")),
        Outcome::Failed
    );
}

#[tokio::test]
async fn go_lists_tests_without_running_them() {
    require_tool("go");
    let project = fixture("go");
    let opts = RunOptions {
        selection: Selection::Paths(vec!["./calc".into(), "./strs".into()]),
        ..opts()
    };
    let listing = list_tests(project.path(), FW, &opts)
        .await
        .expect("go lists");
    let mut tests = listing.tests.clone();
    tests.sort();
    // Top-level tests only: go creates subtests while the tests run (`t.Run`), so no list
    // can name them without running the tests.
    assert_eq!(tests.len(), 13, "{tests:?}");
    assert!(tests.contains(&format!("{CALC}TestUnicode")));
    assert!(tests.contains(&format!("{CALC}TestIdentities")));
    assert!(
        !tests
            .iter()
            .any(|t| t.split_once("::").unwrap().1.contains('/')),
        "{tests:?}"
    );
    assert!(tests.contains(&"example.com/huddlefixture/strs::TestShout".to_string()));
}

/// Real `go test -json` events (go 1.19, times removed) of a subtest that calls `os.Exit`:
/// the binary dies, so neither the subtest, its passing sibling (go reports a subtest's pass
/// when its parent ends) nor the parent get a verdict. All three failed, as gotestsum counts
/// them.
#[test]
fn tests_cut_short_by_a_dying_binary_fail_with_the_package_output() {
    let events = concat!(
        r#"{"Action":"run","Package":"m","Test":"TestGroup"}"#,
        "\n",
        r#"{"Action":"output","Package":"m","Test":"TestGroup","Output":"=== RUN   TestGroup\n"}"#,
        "\n",
        r#"{"Action":"run","Package":"m","Test":"TestGroup/fine"}"#,
        "\n",
        r#"{"Action":"output","Package":"m","Test":"TestGroup/fine","Output":"=== RUN   TestGroup/fine\n"}"#,
        "\n",
        r#"{"Action":"run","Package":"m","Test":"TestGroup/exits"}"#,
        "\n",
        r#"{"Action":"output","Package":"m","Test":"TestGroup/exits","Output":"=== RUN   TestGroup/exits\n"}"#,
        "\n",
        r#"{"Action":"output","Package":"m","Output":"FAIL\tm\t0.003s\n"}"#,
        "\n",
        r#"{"Action":"fail","Package":"m","Elapsed":0.003}"#,
        "\n",
    );
    let tests = huddle_runners::adapters::go_events::parse_go_events(events, "", "m");
    let got: Vec<(&str, Outcome)> = tests
        .iter()
        .map(|t| (t.nodeid.as_str(), t.outcome))
        .collect();
    assert_eq!(
        got,
        [
            ("m::TestGroup", Outcome::Failed),
            ("m::TestGroup/fine", Outcome::Failed),
            ("m::TestGroup/exits", Outcome::Failed),
        ]
    );
    let parent = tests[0].longrepr.as_deref().unwrap();
    assert!(parent.contains("FAIL\tm"), "{parent}");
    assert!(
        parent.ends_with("failed subtests: TestGroup/fine, TestGroup/exits"),
        "{parent}"
    );
}
