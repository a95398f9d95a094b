//! The executor's rule, checked the same way: its repaired tests must still tell good code
//! from bad. With task metadata `knownBad: "<git revision>"`, the tests that failed when the
//! task began are run once more against that revision's code (the executor's test files as
//! they are now, the configuration as it was): each must fail there. A test that passes on the
//! known-bad code was weakened until it checks nothing.

use super::git;
use super::pinned::pinned;
use crate::edits::{is_test_file, Policy};
use crate::runners::{run_tests, Framework, Outcome, RunOptions, Selection};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

/// The revision named by the task, if any.
pub(crate) fn revision(metadata: &Value) -> Result<Option<String>, String> {
    match metadata.get("knownBad") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(rev)) if !rev.is_empty() && !rev.starts_with('-') => {
            Ok(Some(rev.clone()))
        }
        Some(_) => Err("task metadata `knownBad` must be a git revision (a string)".into()),
    }
}

/// Writes `rev`'s code (files that are neither tests nor pinned) over `copy`.
async fn check_out_code(
    project: &Path,
    rev: &str,
    copy: &Path,
    policy: &Policy,
) -> Result<(), String> {
    let listed = git(project, &["ls-tree", "-r", "--name-only", "-z", rev]).await?;
    for rel in listed.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let rel = String::from_utf8_lossy(rel).into_owned();
        if is_test_file(&rel) || pinned(&rel, policy) {
            continue;
        }
        let content = git(project, &["show", &format!("{rev}:{rel}")]).await?;
        let to = copy.join(&rel);
        if let Some(dir) = to.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::write(&to, content).map_err(|e| format!("{rel}: {e}"))?;
    }
    Ok(())
}

/// Runs `tests` against `rev`'s code in a copy of `clean` (the verdict's copy); answers the
/// report's `knownBad` object and the problem, if any.
pub(crate) async fn check(
    project: &Path,
    clean: &Path,
    rev: &str,
    tests: Vec<String>,
    framework: Framework,
    timeout: Duration,
    policy: &Policy,
) -> Result<(Value, Option<String>), String> {
    if tests.is_empty() {
        return Ok((
            json!({"ref": rev, "skipped": "no test failed when the task began"}),
            None,
        ));
    }
    let copy = tokio::task::spawn_blocking({
        let clean = clean.to_path_buf();
        move || super::copy::mirror(&clean)
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| format!("copying for the known-bad run: {e}"))?;
    check_out_code(project, rev, copy.path(), policy).await?;
    let opts = RunOptions {
        selection: Selection::Tests(tests.clone()),
        timeout,
        isolated: true,
        runs_dir: Some(project.join(".huddle").join("runs")),
        ..RunOptions::default()
    };
    let outcome = run_tests(copy.path(), framework, &opts)
        .await
        .map_err(|e| format!("the known-bad run could not run: {e}"))?;
    let passing: Vec<String> = outcome
        .report
        .tests
        .iter()
        .filter(|t| t.outcome == Outcome::Passed && tests.contains(&t.nodeid))
        .map(|t| t.nodeid.clone())
        .collect();
    let problem = (!passing.is_empty()).then(|| {
        format!(
            "{} repaired test(s) pass on the known-bad version {rev}, so they no longer tell good \
             code from bad: {}",
            passing.len(),
            passing.join(", ")
        )
    });
    Ok((
        json!({"ref": rev, "tests": tests.len(), "passingOnBad": passing}),
        problem,
    ))
}
