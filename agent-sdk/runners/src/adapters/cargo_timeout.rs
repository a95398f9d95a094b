//! What a cargo run stopped at its timeout had done. Under `cargo test`, libtest prints each
//! test's line as it ends (stdout is line-buffered), so the finished tests are already in the
//! captured output; a test that hangs prints nothing, so the tests of the binary running at
//! the kill (cargo's last `Running … (target/…/x-hash)` line) that never printed a result are
//! the ones named, from that binary's own `--list`. nextest handles the SIGTERM huddle sends
//! first: it stops the running tests and writes its JUnit report, where they appear as
//! "aborted with signal 15"; those are named, the rest kept.

use super::cargo_libtest::{binaries, MemberSources};
use super::Ctx;
use crate::process::Invocation;
use crate::report::TestResult;
use std::path::PathBuf;

/// The test binary of cargo's last `Running` line, with its label (`unittests src/lib.rs` →
/// `src/lib.rs`), when the run was last in a test binary (not in doc tests).
fn last_binary(stderr: &str) -> Option<(String, String)> {
    let last = stderr
        .lines()
        .map(str::trim_start)
        .rfind(|l| l.starts_with("Running ") || l.starts_with("Doc-tests "))?;
    let rest = last.strip_prefix("Running ")?;
    let rest = rest.strip_prefix("unittests ").unwrap_or(rest);
    let (label, binary) = rest.split_once(" (")?;
    Some((
        label.trim().to_string(),
        binary.trim_end_matches(')').to_string(),
    ))
}

/// The ids of the tests of the binary running at the kill that printed no result: listed by
/// the binary itself with the run's filter. `finished` are the tests read from the output.
pub(crate) async fn libtest_running(
    ctx: &Ctx<'_>,
    stderr: &str,
    members: &MemberSources,
    test_args: &[String],
    finished: &[TestResult],
) -> Vec<String> {
    let Some((_, binary)) = last_binary(stderr) else {
        return Vec::new();
    };
    // The binary's source as its test ids start (a member's made project-relative).
    let Some(prefix) = binaries(stderr, members).pop() else {
        return Vec::new();
    };
    let path = PathBuf::from(&binary);
    let path = if path.is_absolute() {
        path
    } else {
        ctx.project.join(path)
    };
    let mut inv = Invocation::new(&path, ctx.project);
    inv.env = ctx.env.clone();
    inv.arg("--list").arg("--format=terse");
    // `--exact` and names, or a filter: the same tests the run asked this binary for.
    inv.args.extend(test_args.iter().map(Into::into));
    let Ok(out) = ctx.helper(&inv).await else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(|name| format!("{prefix}::{name}"))
        .filter(|id| !finished.iter().any(|t| t.nodeid == *id))
        .collect()
}

/// Whether nextest's report says it stopped this test at huddle's SIGTERM (or the SIGKILL
/// after it).
fn stopped_by_the_kill(t: &TestResult) -> bool {
    t.longrepr.as_deref().is_some_and(|text| {
        text.contains("aborted with signal 15") || text.contains("aborted with signal 9")
    })
}

/// nextest's partial report: the tests it stopped leave the results and are named.
pub(crate) fn split_nextest_stopped(tests: Vec<TestResult>) -> (Vec<TestResult>, Vec<String>) {
    let (stopped, finished): (Vec<TestResult>, Vec<TestResult>) =
        tests.into_iter().partition(stopped_by_the_kill);
    (finished, stopped.into_iter().map(|t| t.nodeid).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_running_binary_is_found_and_doc_tests_are_not_one() {
        let stderr = "     Running unittests src/lib.rs (target/debug/deps/fx-1a2b)\n     \
                      Running tests/strings.rs (/t/debug/deps/strings-9f)\n";
        assert_eq!(
            last_binary(stderr),
            Some(("tests/strings.rs".into(), "/t/debug/deps/strings-9f".into()))
        );
        assert_eq!(
            last_binary("     Running unittests src/lib.rs (target/debug/deps/fx-1a2b)\n"),
            Some(("src/lib.rs".into(), "target/debug/deps/fx-1a2b".into()))
        );
        assert_eq!(last_binary(&format!("{stderr}   Doc-tests fx\n")), None);
    }
}
