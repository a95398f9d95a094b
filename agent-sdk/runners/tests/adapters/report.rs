//! The report and its JUnit form: the pytest-json-report shape on the wire, JUnit XML that
//! round-trips through the parser, and the parsers' handling of formats the fixtures do not
//! produce on this machine (xunit2 pytest files, go 1.24 build events, nested JUnit text).

use huddle_runners::adapters::go_events::parse_go_events;
use huddle_runners::adapters::pytest_parse::parse_pytest_junit;
use huddle_runners::coverage::go_profile_percent;
use huddle_runners::human::render_summary;
use huddle_runners::junit::{parse_junit, write_junit};
use huddle_runners::{Framework, Outcome, Report, Summary, TestResult};

fn sample() -> Report {
    let mut failed = TestResult::new("tests/test_a.py::test_b[<&>]", Outcome::Failed);
    failed.longrepr = Some("assert 1 == 2\n\u{1b}[31mred\u{1b}[0m & <tag> \u{7}bell".into());
    failed.file = Some("tests/test_a.py".into());
    failed.lineno = Some(3);
    failed.duration = 0.25;
    let mut error = TestResult::new("tests/test_broken.py", Outcome::Error);
    error.longrepr = Some("ImportError: no module".into());
    let tests = vec![
        TestResult::new("tests/test_a.py::test_ok", Outcome::Passed),
        failed,
        error,
        TestResult::new("tests/test_a.py::Test::test_skip", Outcome::Skipped),
    ];
    Report {
        created: 1_700_000_000.5,
        duration: 1.5,
        exitcode: 1,
        root: "/p".into(),
        framework: Framework::Pytest,
        summary: Summary::of(&tests),
        tests,
        timed_out: false,
        command: vec!["pytest".into()],
        coverage: None,
        artifacts: Vec::new(),
        flaky: Vec::new(),
        flaky_in_run: 0,
    }
}

#[test]
fn the_report_has_the_pytest_json_report_shape() {
    let v = serde_json::to_value(sample()).unwrap();
    for key in [
        "created",
        "duration",
        "exitcode",
        "root",
        "framework",
        "summary",
        "tests",
    ] {
        assert!(v.get(key).is_some(), "{key}");
    }
    assert_eq!(
        v["summary"],
        serde_json::json!({"passed": 1, "failed": 1, "error": 1, "skipped": 1, "total": 4})
    );
    let t = &v["tests"][1];
    assert_eq!(t["nodeid"], "tests/test_a.py::test_b[<&>]");
    assert_eq!(t["outcome"], "failed");
    assert_eq!(t["lineno"], 3);
    assert_eq!(t["file"], "tests/test_a.py");
    assert!(t["longrepr"].as_str().unwrap().starts_with("assert 1 == 2"));
    let back: Report = serde_json::from_value(v).unwrap();
    assert_eq!(back, sample());
}

#[test]
fn junit_output_round_trips_through_the_parser() {
    let report = sample();
    let xml = write_junit(&report);
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
    assert!(
        xml.contains(r#"<testsuites name="huddle" tests="4" failures="1" errors="1" skipped="1""#),
        "{xml}"
    );
    let cases = parse_junit(&xml).expect("our own XML parses");
    let outcomes: Vec<Outcome> = cases.iter().map(|c| c.outcome).collect();
    assert_eq!(
        outcomes,
        [
            Outcome::Passed,
            Outcome::Failed,
            Outcome::Error,
            Outcome::Skipped
        ]
    );
    assert_eq!(cases[1].classname, "tests/test_a.py");
    assert_eq!(cases[1].name, "test_b[<&>]");
    assert_eq!(cases[1].line, Some(3));
    assert_eq!(cases[1].message.as_deref(), Some("assert 1 == 2"));
    assert!(
        cases[1].text.contains("& <tag> bell"),
        "control characters dropped: {:?}",
        cases[1].text
    );
    assert_eq!(cases[3].classname, "tests/test_a.py::Test");
}

#[test]
fn pytest_xunit2_files_without_file_attributes_still_give_node_ids() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tests")).unwrap();
    std::fs::write(dir.path().join("tests/test_m.py"), "").unwrap();
    let xml = r#"<testsuites><testsuite name="pytest">
        <testcase classname="tests.test_m.TestK" name="test_x" time="0.5"><failure message="boom">trace &amp; more</failure></testcase>
        <testcase classname="tests.test_m" name="test_y" time="0.1"><skipped message="later"/></testcase>
        </testsuite></testsuites>"#;
    let tests = parse_pytest_junit(xml, dir.path()).unwrap();
    assert_eq!(tests[0].nodeid, "tests/test_m.py::TestK::test_x");
    assert_eq!(tests[0].longrepr.as_deref(), Some("trace & more"));
    assert_eq!(tests[1].nodeid, "tests/test_m.py::test_y");
    assert_eq!(tests[1].outcome, Outcome::Skipped);
}

#[test]
fn go_build_failures_are_errors_in_old_and_new_event_formats() {
    // go 1.24+: build-output / build-fail events and a package fail without tests.
    let new = concat!(
        r#"{"ImportPath":"m/bad","Action":"build-output","Output":"bad/x.go:3:1: syntax error\n"}"#,
        "\n",
        r#"{"ImportPath":"m/bad","Action":"build-fail"}"#,
        "\n",
        r#"{"Action":"start","Package":"m/bad"}"#,
        "\n",
        r#"{"Action":"fail","Package":"m/bad","Elapsed":0,"FailedBuild":"m/bad"}"#,
        "\n",
    );
    let tests = parse_go_events(new, "", "m");
    assert_eq!(tests.len(), 1, "{tests:?}");
    assert_eq!(
        (tests[0].nodeid.as_str(), tests[0].outcome),
        ("m/bad", Outcome::Error)
    );
    assert!(tests[0]
        .longrepr
        .as_deref()
        .unwrap()
        .contains("syntax error"));
    // go before 1.24: a plain-text FAIL line on stdout and the compiler on stderr.
    let old = "FAIL\tm/bad [build failed]\n";
    let tests = parse_go_events(old, "# m/bad\nbad/x.go:3:1: syntax error\n", "m");
    assert_eq!(
        (tests[0].nodeid.as_str(), tests[0].outcome),
        ("m/bad", Outcome::Error)
    );
    assert!(tests[0]
        .longrepr
        .as_deref()
        .unwrap()
        .contains("syntax error"));
}

#[test]
fn go_cover_profiles_count_each_block_once() {
    let profile = "mode: set\nm/a.go:1.1,2.2 3 1\nm/a.go:3.1,4.2 1 0\nm/a.go:1.1,2.2 3 0\n";
    assert_eq!(go_profile_percent(profile), Some(75.0));
    assert_eq!(go_profile_percent("mode: set\n"), None);
}

#[test]
fn the_human_summary_puts_failures_first() {
    let text = render_summary(&sample(), None);
    let failed = text
        .find("FAILED tests/test_a.py::test_b")
        .expect("failure listed");
    let error = text
        .find("ERROR  tests/test_broken.py")
        .expect("error listed");
    let counts = text
        .find("pytest: 1 passed, 1 failed, 1 error, 1 skipped (4 total)")
        .expect("counts");
    assert!(failed < error && error < counts, "{text}");
    assert!(text.contains("    assert 1 == 2"), "{text}");
    assert!(!text.contains('\u{1b}'), "colour codes stripped");
}
