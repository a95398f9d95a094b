//! Output caps on tests/fixtures/jest-odd with `FIXTURE_HUGE` set: one test fails with a
//! 50 MB message. The run keeps every count, cuts the message with a visible marker in every
//! artefact, never holds it whole (peak memory of this test process stays under 200 MB), and
//! old run directories are pruned to the configured number.

use crate::common::*;
use huddle_runners::limits::TRUNCATED;
use huddle_runners::rundir::default_runs_dir;
use huddle_runners::{run_tests, Framework, OutputLimits, RunOptions};

/// This process's peak resident memory (VmHWM), in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM line");
    kb * 1024
}

#[tokio::test]
async fn a_50_mb_failure_message_is_capped_everywhere_with_bounded_memory() {
    require_tool("node");
    let project = fixture("jest-odd");
    let opts = RunOptions {
        env: vec![("FIXTURE_HUGE".into(), "1".into())],
        ..opts()
    };
    let outcome = run_tests(project.path(), Framework::Jest, &opts)
        .await
        .expect("jest runs");
    let report = &outcome.report;
    assert_eq!(counts(report), (5, 3, 0, 0, 8), "{:?}", report.summary);
    let limits = OutputLimits::default();
    let huge = longrepr(report, "::fails with a 50 MB message");
    assert!(huge.contains("huge:xxx"), "the start stays");
    assert!(huge.contains(TRUNCATED), "a visible marker");
    assert!(
        huge.len() < limits.per_test + 200,
        "{} bytes kept",
        huge.len()
    );

    let dir = &outcome.run_dir;
    let size = |name: &str| {
        std::fs::metadata(dir.join(name))
            .map(|m| m.len())
            .unwrap_or(0)
    };
    for name in ["report.json", "junit.xml"] {
        let text = std::fs::read_to_string(dir.join(name)).expect("artefact");
        assert!(text.contains(TRUNCATED), "{name} shows the cut");
        assert!(size(name) < 1024 * 1024, "{name}: {} bytes", size(name));
    }
    assert!(
        size("stderr.txt") <= limits.per_stream as u64 + 200,
        "stderr.txt: {}",
        size("stderr.txt")
    );
    assert!(
        !dir.join("jest.json").exists(),
        "the 50 MB runner file is not kept"
    );
    assert!(dir.join("jest.json.truncated.txt").is_file());

    let peak = peak_rss();
    eprintln!("peak RSS of the test process: {} MB", peak / (1024 * 1024));
    assert!(peak < 200 * 1024 * 1024, "peak RSS {peak} bytes");
}

#[tokio::test]
async fn only_the_newest_runs_are_kept() {
    require_tool("node");
    let project = fixture("jest-odd");
    let opts = RunOptions {
        filter: Some("squares".into()),
        output: OutputLimits {
            keep_runs: 2,
            ..OutputLimits::default()
        },
        ..opts()
    };
    let mut dirs = Vec::new();
    for _ in 0..3 {
        dirs.push(
            run_tests(project.path(), Framework::Jest, &opts)
                .await
                .expect("runs")
                .run_dir,
        );
    }
    let runs = default_runs_dir(project.path());
    let mut left: Vec<_> = std::fs::read_dir(&runs)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.path())
        .collect();
    left.sort();
    assert_eq!(left, dirs[1..].to_vec(), "the oldest run is pruned");
    let latest = std::fs::read_to_string(runs.join("LATEST")).unwrap();
    assert!(dirs[2].ends_with(latest.trim()));
}
