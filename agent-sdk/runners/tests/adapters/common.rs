//! Shared helpers for the runner tests (and the `huddle test` tests of huddle-cli): a private copy of a fixture per test (tests run
//! in parallel and runs write into the project), loud failures when a tool is missing, and
//! assertions on reports.

use huddle_runners::{Outcome, Report, RunOptions};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `tests/fixtures/<name>` in the repository.
pub fn fixture_source(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

/// Directories never copied: installed or generated (yarn berry's `.yarn` holds its cache and
/// install state). Every `node_modules` and `.venv` is linked instead (a workspace has one
/// `node_modules` per member; the tier fixtures' `.venv` is `scripts/install-test-deps`'s).
const NOT_COPIED: &[&str] = &[".yarn", "target", ".huddle", "__pycache__", ".pytest_cache"];

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create fixture copy");
    for entry in std::fs::read_dir(from).expect("read fixture") {
        let entry = entry.expect("fixture entry");
        let name = entry.file_name();
        if NOT_COPIED.iter().any(|n| name == *n) {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        if name == "node_modules" || name == ".venv" {
            std::os::unix::fs::symlink(&src, &dst).expect("link installed packages");
        } else if entry.file_type().expect("file type").is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).expect("copy fixture file");
        }
    }
}

/// A private copy of fixture `name` in a temporary directory. A node fixture's installed
/// `node_modules` directories are symlinked, not copied; when it is missing the test fails, naming the
/// command that installs it.
pub fn fixture(name: &str) -> tempfile::TempDir {
    let src = fixture_source(name);
    let dir = tempfile::Builder::new()
        .prefix(&format!("huddle-{name}-"))
        .tempdir()
        .expect("temp dir");
    let needs_packages = std::fs::read_to_string(src.join("package.json"))
        .is_ok_and(|p| p.contains("\"devDependencies\"") || p.contains("\"dependencies\""));
    if needs_packages {
        let modules = src.join("node_modules");
        assert!(
            modules.is_dir(),
            "{} is missing: run scripts/install-test-deps (it installs tests/fixtures/{name}'s \
             packages from its lockfile)",
            modules.display()
        );
    }
    copy_tree(&src, dir.path());
    dir
}

/// Fails the test loudly when `tool` is not on PATH (CI must never skip a runner test).
pub fn require_tool(tool: &str) {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
        .unwrap_or(false);
    assert!(
        found,
        "{tool} is required by this test but is not on PATH{}: run scripts/install-test-deps",
        if std::env::var("CI").as_deref() == Ok("true") {
            " (CI)"
        } else {
            ""
        }
    );
}

/// Fails loudly unless Python can import pytest.
pub fn require_pytest() {
    require_tool("python3");
    let ok = std::process::Command::new("python3")
        .args(["-c", "import pytest"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        ok,
        "pytest is required by this test: run scripts/install-test-deps (pip install pytest)"
    );
}

/// Options for a test run: a generous timeout (the fixtures take seconds).
pub fn opts() -> RunOptions {
    RunOptions {
        timeout: Duration::from_secs(300),
        ..RunOptions::default()
    }
}

/// The outcome of the one test whose node id ends with `suffix`.
pub fn outcome(report: &Report, suffix: &str) -> Outcome {
    let matches: Vec<_> = report
        .tests
        .iter()
        .filter(|t| t.nodeid.ends_with(suffix))
        .collect();
    assert_eq!(
        matches.len(),
        1,
        "expected one test ending with {suffix:?}, found {:?} in {:#?}",
        matches.iter().map(|t| &t.nodeid).collect::<Vec<_>>(),
        report
            .tests
            .iter()
            .map(|t| (&t.nodeid, t.outcome))
            .collect::<Vec<_>>()
    );
    matches[0].outcome
}

/// Asserts every listed test's outcome, and that the report has exactly these tests.
pub fn assert_outcomes(report: &Report, expected: &[(&str, Outcome)]) {
    for (suffix, want) in expected {
        assert_eq!(outcome(report, suffix), *want, "outcome of {suffix}");
    }
    assert_eq!(
        report.tests.len(),
        expected.len(),
        "unexpected tests in report: {:#?}",
        report
            .tests
            .iter()
            .map(|t| (&t.nodeid, t.outcome))
            .collect::<Vec<_>>()
    );
}

/// The summary as (passed, failed, error, skipped, total).
pub fn counts(report: &Report) -> (usize, usize, usize, usize, usize) {
    let s = report.summary;
    (s.passed, s.failed, s.error, s.skipped, s.total)
}

/// The failure text of the test whose node id ends with `suffix`.
pub fn longrepr<'a>(report: &'a Report, suffix: &str) -> &'a str {
    report
        .tests
        .iter()
        .find(|t| t.nodeid.ends_with(suffix))
        .and_then(|t| t.longrepr.as_deref())
        .unwrap_or_else(|| panic!("no failure text for {suffix}"))
}

/// Whether the process `pid` is gone (or a zombie nobody reaped yet).
pub fn process_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.trim_start().starts_with('Z'))
            .unwrap_or(false),
    }
}

/// Waits (bounded) for `pid` to be gone: the kernel delivers SIGKILL asynchronously.
pub async fn wait_gone(pid: i32) -> bool {
    for _ in 0..200 {
        if process_gone(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    false
}

/// Runs `git` in `dir`, failing the test on error.
pub fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=huddle",
            "-c",
            "user.email=huddle@example.com",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Makes `dir` a git repository with everything committed.
pub fn git_commit_all(dir: &Path) {
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "fixture"]);
}

/// The ids of a report's real tests (not synthetic entries, not files that failed to load),
/// sorted: what a listing of the same selection must give.
pub fn test_ids(report: &Report) -> Vec<String> {
    sorted(
        report
            .tests
            .iter()
            .filter(|t| !t.is_synthetic() && t.nodeid.contains("::"))
            .map(|t| t.nodeid.clone())
            .collect(),
    )
}

/// `ids`, sorted.
pub fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids
}
