//! Doc tests in a `cargo test --doc` of their own, beside the main run. nextest cannot run
//! them (they are not test binaries; its book says to run `cargo test --doc` too), and a doc
//! test cannot be picked by name: its name has spaces (`src/lib.rs - add (line 5)`), and
//! rustdoc splits its test arguments at whitespace, so `--exact` never matches one. A re-run
//! of a failed doc test filters by its item path (`add`, `text::shout`), which may also
//! re-run doc tests whose paths contain it. libtest's lines are read as for `cargo test`.

use super::cargo::Workspace;
use super::cargo_files::build_errors;
use super::cargo_libtest::parse_libtest;
use super::Ctx;
use crate::error::RunnerError;
use crate::process::{self, Captured, Invocation, Limits};
use crate::report::{Outcome, TestResult};
use crate::rundir;
use crate::scrub::{strip_ansi, tail_lines};
use std::path::Path;
use std::time::Duration;

/// The node id prefix of doc tests: `doc-tests/<crate>::<name>`, after cargo's
/// `Doc-tests <crate>` line.
pub const DOC_PREFIX: &str = "doc-tests/";

/// The selection path that asks for the library's doc tests (`Selection::Paths`): the tiers
/// put them in the unit tier, beside `src/lib.rs` (which is `--lib`, and leaves them out).
pub const DOC_TESTS_PATH: &str = "doc-tests";

/// Doc tests to run with their own command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct DocRun {
    /// Which packages, by package or crate name; `None`: every default member with doc tests
    /// (what `cargo test` would run).
    pub packages: Option<Vec<String>>,
    /// libtest arguments after `--`: the filter, or item paths of doc tests to re-run.
    pub test_args: Vec<String>,
}

/// What the doc-test run added to a report.
#[derive(Debug, Clone, Default)]
pub(crate) struct DocOutcome {
    pub tests: Vec<TestResult>,
    pub exit_code: i32,
    pub timed_out: bool,
}

/// Whether a node id is a doc test's.
pub fn is_doc_id(id: &str) -> bool {
    id.starts_with(DOC_PREFIX)
}

/// The crate of a doc test's node id (`doc-tests/mycrate::…` → `mycrate`).
pub(crate) fn crate_of(id: &str) -> Option<&str> {
    id.strip_prefix(DOC_PREFIX)?.split("::").next()
}

/// The filter that re-runs a doc test: its item path (`src/lib.rs - text::shout (line 6)` →
/// `text::shout`), or its file for a crate-level example (`src/lib.rs - (line 1)`).
pub fn filter_for(id: &str) -> String {
    let name = id.split_once("::").map_or(id, |(_, n)| n);
    let (file, rest) = name.split_once(" - ").unwrap_or((name, ""));
    let item = rest
        .rsplit_once("(line ")
        .map_or(rest, |(item, _)| item)
        .trim();
    if item.is_empty() {
        file.to_string()
    } else {
        item.to_string()
    }
}

/// The packages whose doc tests `doc` asks for, among those that have any, by package id
/// spec.
pub(crate) fn packages(doc: &DocRun, ws: &Workspace) -> Vec<String> {
    ws.doc_packages
        .iter()
        .filter(|d| match &doc.packages {
            None => d.default_member,
            Some(wanted) => wanted.iter().any(|w| *w == d.package || *w == d.crate_name),
        })
        .map(|d| d.pkgid.clone())
        .collect()
}

/// `cargo test --doc --no-fail-fast [-p pkg…] -- <args>` (or its `--list`).
pub(crate) fn invocation(
    ctx: &Ctx<'_>,
    cargo: &Path,
    packages: &[String],
    test_args: &[String],
    list: bool,
) -> Invocation {
    let mut inv = ctx.invocation(cargo);
    inv.arg("test").arg("--doc");
    if !list {
        inv.arg("--no-fail-fast");
    }
    for p in packages {
        inv.arg("--package").arg(p);
    }
    inv.arg("--");
    if list {
        inv.arg("--list");
    }
    inv.args.extend(test_args.iter().map(Into::into));
    inv
}

/// Runs the doc tests after the main run, within the time the main run left, and keeps their
/// output in the run directory (`doctests-stdout.txt`, `doctests-stderr.txt`).
pub(crate) async fn run(
    ctx: &Ctx<'_>,
    cargo: &Path,
    packages: &[String],
    doc: &DocRun,
    time_left: Duration,
) -> Result<DocOutcome, RunnerError> {
    let inv = invocation(ctx, cargo, packages, &doc.test_args, false);
    let limits = Limits {
        timeout: time_left,
        grace: ctx.opts.kill_grace,
    };
    let captured = process::run(&inv, limits)
        .await
        .map_err(|e| RunnerError::io("running cargo test --doc", e))?;
    rundir::write(ctx.run_dir, "doctests-stdout.txt", &captured.stdout)?;
    rundir::write(ctx.run_dir, "doctests-stderr.txt", &captured.stderr)?;
    Ok(read(&captured, time_left))
}

fn read(captured: &Captured, time_left: Duration) -> DocOutcome {
    let stdout = String::from_utf8_lossy(&captured.stdout);
    let stderr = String::from_utf8_lossy(&captured.stderr);
    let mut tests = parse_libtest(&stdout, &stderr);
    tests.extend(build_errors(&stderr));
    let output = || {
        let pick = if stderr.trim().is_empty() {
            &stdout
        } else {
            &stderr
        };
        tail_lines(&strip_ansi(pick), 40)
    };
    if captured.timed_out {
        let mut t = TestResult::new("[TIMEOUT]", Outcome::Error);
        t.longrepr = Some(format!(
            "[TIMEOUT] the doc tests (`cargo test --doc`, run after the other tests) exceeded \
             the {}s the run had left; their process group was killed.\n{}",
            time_left.as_secs_f64(),
            output()
        ));
        tests.push(t);
    } else if captured.exit_code != 0 && !tests.iter().any(|t| t.outcome.is_failure()) {
        let mut t = TestResult::new("[doctests]", Outcome::Error);
        t.longrepr = Some(format!(
            "cargo test --doc exited with code {} although no doc test failed:\n{}",
            captured.exit_code,
            output()
        ));
        tests.push(t);
    }
    DocOutcome {
        tests,
        exit_code: captured.exit_code,
        timed_out: captured.timed_out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured(stdout: &str, exit_code: i32, timed_out: bool) -> Captured {
        Captured {
            exit_code,
            stdout: stdout.as_bytes().to_vec(),
            stderr: b"   Doc-tests mycrate\n".to_vec(),
            timed_out,
            elapsed: Duration::from_secs(1),
        }
    }

    #[test]
    fn filters_name_the_item_or_the_file() {
        let id = |name: &str| format!("{DOC_PREFIX}c::{name}");
        assert_eq!(filter_for(&id("src/lib.rs - add (line 5)")), "add");
        assert_eq!(
            filter_for(&id("src/text.rs - text::shout (line 6)")),
            "text::shout"
        );
        assert_eq!(filter_for(&id("src/lib.rs - (line 1)")), "src/lib.rs");
        assert_eq!(crate_of(&id("x")), Some("c"));
    }

    #[test]
    fn a_doc_run_cut_by_the_timeout_is_a_timeout_entry() {
        let out = "running 1 test\n";
        let read = read(&captured(out, 124, true), Duration::from_secs(7));
        assert!(read.timed_out);
        assert_eq!(read.tests.len(), 1, "{:?}", read.tests);
        let t = &read.tests[0];
        assert_eq!(
            (t.nodeid.as_str(), t.outcome),
            ("[TIMEOUT]", Outcome::Error)
        );
        assert!(t
            .longrepr
            .as_deref()
            .unwrap()
            .contains("the 7s the run had left"));
    }

    #[test]
    fn a_failing_doc_run_without_failing_tests_is_an_error_entry() {
        let read = read(&captured("", 101, false), Duration::from_secs(7));
        assert_eq!(read.tests.len(), 1, "{:?}", read.tests);
        assert_eq!(read.tests[0].nodeid, "[doctests]");
        let passing = "running 1 test\ntest src/lib.rs - add (line 5) ... ok\n";
        let read = read_ok(passing);
        assert_eq!(read.tests.len(), 1);
        assert_eq!(
            (read.tests[0].file.as_deref(), read.tests[0].lineno),
            (Some("src/lib.rs"), Some(5))
        );
    }

    fn read_ok(stdout: &str) -> DocOutcome {
        read(&captured(stdout, 0, false), Duration::from_secs(7))
    }
}
