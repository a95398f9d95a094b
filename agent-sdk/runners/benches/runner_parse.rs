//! Benchmark (not a test): parse a 100,000-test JUnit file (pytest's shape, through the
//! pytest node-id rebuild) and a 100,000-test jest JSON file, and print the timings. The issue
//! asks for under a second each in release mode (`cargo bench` builds with the bench profile).
//!
//! `cargo bench -p huddle-sdk --bench runner_parse` — `HUDDLE_BENCH_TESTS=N` changes the size.

use huddle_runners::adapters::jest::parse_jest_json;
use huddle_runners::adapters::pytest_parse::{parse_huddle_pytest, parse_pytest_junit};
use huddle_runners::junit::parse_junit;
use huddle_runners::{Framework, Report, Summary};
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

/// One in ten tests fails with a multi-line message, one in twenty is skipped: output of a
/// realistic suite, with escaped text to unescape.
fn junit(n: usize) -> String {
    let mut xml = String::with_capacity(n * 200);
    xml.push_str(r#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">"#);
    for i in 0..n {
        let module = i / 100;
        let _ = write!(
            xml,
            r#"<testcase classname="tests.test_m{module}.TestK" name="test_{i}[a-{i}]" file="tests/test_m{module}.py" line="{}" time="0.001">"#,
            i % 500
        );
        if i % 10 == 0 {
            let _ = write!(
                xml,
                r#"<failure message="assert {i} == 0">def test_{i}():&#10;&gt;       assert x == 0&#10;E       assert {i} == 0&#10;&#10;tests/test_m{module}.py:3: AssertionError</failure>"#
            );
        } else if i % 20 == 1 {
            xml.push_str(r#"<skipped type="pytest.skip" message="later">later</skipped>"#);
        }
        xml.push_str("</testcase>");
    }
    xml.push_str("</testsuite></testsuites>");
    xml
}

fn jest_json(n: usize) -> String {
    let per_file = 100;
    let mut suites = Vec::with_capacity(n / per_file + 1);
    for f in 0..n.div_ceil(per_file) {
        let mut assertions = Vec::with_capacity(per_file);
        for i in f * per_file..((f + 1) * per_file).min(n) {
            let (status, failures) = if i % 10 == 0 {
                ("failed", vec![format!("Error: expect(received).toBe(expected)\n\nExpected: 0\nReceived: {i}\n    at Object.<anonymous> (/p/src/m{f}.test.js:3:5)")])
            } else if i % 20 == 1 {
                ("pending", vec![])
            } else {
                ("passed", vec![])
            };
            assertions.push(serde_json::json!({
                "ancestorTitles": ["module", format!("group {}", i % 7)],
                "title": format!("test {i}"),
                "fullName": format!("module group {} test {i}", i % 7),
                "status": status,
                "duration": 1,
                "failureMessages": failures,
                "location": {"line": i % 500, "column": 3}
            }));
        }
        suites.push(serde_json::json!({
            "name": format!("/p/src/m{f}.test.js"),
            "status": "failed",
            "message": "",
            "assertionResults": assertions
        }));
    }
    serde_json::json!({"numTotalTests": n, "testResults": suites}).to_string()
}

/// What huddle's pytest reporter writes: one row per test, text only on failures.
fn huddle_pytest_json(n: usize) -> String {
    let tests: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            let module = i / 100;
            let id = format!("tests/test_m{module}.py::TestK::test_{i}[a-{i}]");
            if i % 10 == 0 {
                serde_json::json!([id, "failed", 0.001, i % 500, format!("def test_{i}():\n>       assert x == 0\nE       assert {i} == 0\n\ntests/test_m{module}.py:3: AssertionError")])
            } else if i % 20 == 1 {
                serde_json::json!([id, "skipped", 0.001, i % 500, null])
            } else {
                serde_json::json!([id, "passed", 0.001, i % 500, null])
            }
        })
        .collect();
    serde_json::json!({"tests": tests, "errors": []}).to_string()
}

fn time<T>(what: &str, bytes: usize, f: impl Fn() -> T) -> Duration {
    // Best of three: the figure is the parser's cost, not the machine's other load.
    let best = (0..3)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(f());
            start.elapsed()
        })
        .min()
        .unwrap_or_default();
    println!(
        "{what:<44} {:>8.1} ms  ({:.1} MB)",
        best.as_secs_f64() * 1000.0,
        bytes as f64 / 1e6
    );
    best
}

fn main() {
    let n: usize = std::env::var("HUDDLE_BENCH_TESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let root = Path::new("/p");
    println!("runner report parsing, {n} tests per file");
    let xml = junit(n);
    let cases = parse_junit(&xml).expect("valid JUnit").len();
    assert_eq!(cases, n, "every testcase parsed");
    time("JUnit XML → test cases (quick-xml)", xml.len(), || {
        parse_junit(&xml)
    });
    time(
        "JUnit XML → report entries (pytest node ids)",
        xml.len(),
        || parse_pytest_junit(&xml, root),
    );
    let huddle = huddle_pytest_json(n);
    let entries = parse_huddle_pytest(huddle.as_bytes()).expect("valid reporter JSON");
    assert_eq!(entries.len(), n, "every row parsed");
    time(
        "huddle pytest reporter JSON → report entries",
        huddle.len(),
        || parse_huddle_pytest(huddle.as_bytes()),
    );
    // What every run does after parsing: scrub the entries, write report.json and junit.xml.
    let runs = std::env::temp_dir().join(format!("huddle-bench-finish-{}", std::process::id()));
    let report = Report {
        created: 0.0,
        duration: 0.0,
        exitcode: 1,
        root: "/p".into(),
        framework: Framework::Pytest,
        summary: Summary::of(&entries),
        tests: entries,
        timed_out: false,
        command: vec!["python3".into(), "-m".into(), "pytest".into()],
        coverage: None,
        artifacts: Vec::new(),
        flaky: Vec::new(),
        flaky_in_run: 0,
    };
    time(
        "finish: scrub + report.json + junit.xml",
        huddle.len(),
        || {
            let dir = runs.join("run");
            std::fs::create_dir_all(&dir).expect("run dir");
            let mut r = report.clone();
            huddle_runners::rundir::finish(&dir, &mut r).expect("finished");
            let _ = std::fs::remove_dir_all(&runs);
        },
    );
    let json = jest_json(n);
    let tests = parse_jest_json(json.as_bytes(), root)
        .expect("valid jest JSON")
        .len();
    assert_eq!(tests, n, "every assertion parsed");
    time(
        "jest JSON → report entries (serde_json)",
        json.len(),
        || parse_jest_json(json.as_bytes(), root),
    );
}
