//! The short human summary `huddle test` prints: failures first, each with the heart of its
//! message, then one line of counts, then where the full output is.

use crate::report::{Outcome, Report, TestResult};
use crate::scrub::{scrub, strip_ansi};
use std::fmt::Write as _;
use std::path::Path;

/// Lines of each failure's message shown (head and tail of longer ones).
pub const FAILURE_LINES: usize = 12;

fn excerpt(text: &str, max: usize) -> Vec<String> {
    let clean = scrub(&strip_ansi(text)).into_owned();
    let lines: Vec<&str> = clean.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.len() <= max {
        return lines.into_iter().map(str::to_string).collect();
    }
    let head = max / 2;
    let tail = max - head;
    let mut out: Vec<String> = lines[..head].iter().map(|l| l.to_string()).collect();
    out.push(format!("… {} lines …", lines.len() - max));
    out.extend(lines[lines.len() - tail..].iter().map(|l| l.to_string()));
    out
}

fn failure(out: &mut String, t: &TestResult) {
    let label = if t.outcome == Outcome::Error {
        "ERROR "
    } else {
        "FAILED"
    };
    let _ = write!(out, "{label} {}", t.nodeid);
    match (&t.file, t.lineno) {
        (Some(f), Some(l)) => {
            let _ = write!(out, "  ({f}:{l})");
        }
        (Some(f), None) if !t.nodeid.starts_with(f.as_str()) => {
            let _ = write!(out, "  ({f})");
        }
        _ => {}
    }
    out.push('\n');
    for line in excerpt(t.longrepr.as_deref().unwrap_or(""), FAILURE_LINES) {
        let _ = writeln!(out, "    {line}");
    }
}

/// The counts line: `pytest: 8 passed, 3 failed, 2 errors, 1 skipped (14 total) in 0.61s`.
pub fn counts_line(report: &Report) -> String {
    let s = &report.summary;
    let errors = if s.error == 1 { "error" } else { "errors" };
    format!(
        "{}: {} passed, {} failed, {} {errors}, {} skipped ({} total) in {:.2}s, exit code {}",
        report.framework,
        s.passed,
        s.failed,
        s.error,
        s.skipped,
        s.total,
        report.duration,
        report.exitcode
    )
}

/// Renders the summary of `report`; `run_dir` is mentioned when given.
pub fn render_summary(report: &Report, run_dir: Option<&Path>) -> String {
    let mut out = String::new();
    for t in report.failures() {
        failure(&mut out, t);
    }
    if report.timed_out {
        out.push_str("[TIMEOUT] the run was stopped at its timeout; exit code 124\n");
    }
    if report.summary.total == 0 {
        out.push_str("no tests ran\n");
    }
    out.push_str(&counts_line(report));
    out.push('\n');
    if let Some(c) = &report.coverage {
        let _ = writeln!(out, "coverage: {:.1}% of lines", c.line_percent);
    }
    if report.flaky_in_run > 0 {
        // Counted as passed above; said here so a pass after a retry is not mistaken for health.
        let _ = writeln!(
            out,
            "flaky in this run: {} (failed, then passed on a retry): {}",
            report.flaky_in_run,
            report.flaky.join(", ")
        );
    }
    if let Some(dir) = run_dir {
        let _ = writeln!(
            out,
            "run: {} (report.json, junit.xml, stdout.txt, stderr.txt)",
            dir.display()
        );
    }
    out
}
