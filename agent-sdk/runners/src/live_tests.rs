use super::*;

fn count(lines: &[&str], parse: fn(&[u8]) -> Option<Progress>) -> (u64, u64) {
    let c = LiveCounts::default();
    for l in lines {
        match parse(l.as_bytes()) {
            Some(Progress::Test { failed }) => c.count(failed),
            Some(Progress::Broken) => c.count_failure(),
            None => {}
        }
    }
    c.snapshot()
}

#[test]
fn pytest_progress_lines_count_finished_tests_and_failures() {
    let lines = [
        r#"["start", "tests/test_a.py::test_x"]"#,
        r#"["test", ["tests/test_a.py::test_x", "passed", 0.001, 3, null]]"#,
        r#"["test", ["tests/test_a.py::test_y[\", \"passed\", ]", "failed", 0.2, 7, "assert 1 == 2"]]"#,
        r#"["test", ["tests/test_a.py::test_z", "skipped", 0.0, 9, null]]"#,
        r#"["test", ["tests/test_a.py::test_w", "error", 0.0, 11, "fixture"]]"#,
        r#"["error", "tests/test_broken.py", "ImportError"]"#,
    ];
    assert_eq!(count(&lines, pytest_line), (4, 3));
}

#[test]
fn jest_progress_lines_count_results_not_starts() {
    let lines = [
        r#"{"event":"start","file":"/p/a.test.js","ancestorTitles":[],"title":"adds"}"#,
        r#"{"event":"result","file":"/p/a.test.js","ancestorTitles":[],"title":"adds","status":"passed","duration":1}"#,
        r#"{"event":"result","file":"/p/a.test.js","ancestorTitles":[],"title":"x","status":"failed","failureMessages":["boom"]}"#,
        r#"{"event":"result","file":"/p/a.test.js","ancestorTitles":[],"title":"later","status":"pending"}"#,
        r#"{"event":"file-error","file":"/p/b.test.js","message":"SyntaxError"}"#,
    ];
    assert_eq!(count(&lines, jest_line), (3, 2));
}

fn tapped(framework: Framework, chunks: &[(Stream, &str)]) -> (u64, u64) {
    let c = Arc::new(LiveCounts::default());
    let tap = output_tap(framework, c.clone()).expect("a tap");
    for (stream, chunk) in chunks {
        tap(*stream, chunk.as_bytes());
    }
    c.snapshot()
}

#[test]
fn go_events_count_tests_and_subtests_across_chunk_boundaries() {
    let out = "{\"Action\":\"run\",\"Test\":\"TestA\"}\n{\"Action\":\"pass\",\"Test\":\"TestA\"}\n\
{\"Action\":\"pass\",\"Test\":\"TestB/sub\"}\n{\"Action\":\"fail\",\"Test\":\"TestB\"}\n\
{\"Action\":\"skip\",\"Test\":\"TestC\"}\n{\"Action\":\"fail\",\"Package\":\"m\"}\n";
    let (a, b) = out.split_at(30);
    let chunks = [(Stream::Stdout, a), (Stream::Stdout, b)];
    assert_eq!(tapped(Framework::Go, &chunks), (4, 1));
}

#[test]
fn cargo_lines_count_libtest_and_nextest_results() {
    let libtest = "running 3 tests\ntest a::t ... ok\ntest a::u ... FAILED\n\
test a::v ... ignored, slow\ntest result: FAILED. 1 passed; 1 failed; 1 ignored\n";
    let nextest = "    Starting 2 tests across 1 binary (1 test skipped)\n        PASS [   0.003s] c::bin t1\n\
        FAIL [   0.010s] c::bin t2\n     Summary [   0.011s] 2 tests run\n\
        FAIL [   0.010s] c::bin t2\n";
    let chunks = [(Stream::Stdout, libtest), (Stream::Stderr, nextest)];
    assert_eq!(tapped(Framework::Cargo, &chunks), (6, 2));
}

#[test]
fn a_huge_line_is_looked_at_by_its_start_only() {
    let mut lines = Lines::default();
    let mut seen = Vec::new();
    let huge = format!("{}\nnext\n", "x".repeat(LINE_PREFIX * 3));
    lines.feed(huge.as_bytes(), |l| seen.push(l.len()));
    assert_eq!(seen, [LINE_PREFIX, 4]);
}

#[test]
fn frameworks_reporting_at_the_end_have_no_tap() {
    let c = Arc::new(LiveCounts::default());
    assert!(output_tap(Framework::Vitest, c.clone()).is_none());
    assert!(output_tap(Framework::Pytest, c).is_none());
}
