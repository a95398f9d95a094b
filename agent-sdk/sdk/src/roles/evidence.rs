//! What a verdict ran on, so someone reading the task later can tell exactly what was run on
//! what: the run's id in the team's test history, the tree's content hash, the git HEAD and a
//! hash of the working-tree diff against it, counts per outcome (errors apart from failures)
//! and the tests that vanished.

use crate::runners::Report;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::path::Path;
use tokio::process::Command;

/// Directories whose files are not the code under test, left out of the diff hash.
const SKIPPED: &[&str] = &[
    ".huddle",
    "node_modules",
    "__pycache__",
    ".pytest_cache",
    "target",
];

/// Most vanished ids listed (the count is always whole), so a message stays within the bus's
/// size limit when a whole directory of tests goes.
pub(crate) const MAX_IDS_SHOWN: usize = 100;

/// The verdict run as it was recorded in the test history.
#[derive(Debug, Clone, Default)]
pub(crate) struct RecordedRun {
    /// Its id in the team's test history, when the daemon stored it.
    pub run_id: Option<i64>,
    /// The content hash of the project tree it ran on.
    pub tree: Option<String>,
    /// The project name the history keeps it under.
    pub project: String,
}

/// The `evidence` object of a task's result and `test_result`.
pub(crate) async fn evidence(
    project: &Path,
    report: Option<&Report>,
    vanished: &[String],
    recorded: &RecordedRun,
) -> Value {
    let s = report.map(|r| r.summary).unwrap_or_default();
    let (head, diff_hash) = git_state(project).await;
    json!({
        "runId": recorded.run_id,
        "project": recorded.project,
        "tree": recorded.tree,
        "gitHead": head,
        "diffHash": diff_hash,
        "framework": report.map(|r| r.framework.name()),
        "counts": {
            "total": s.total, "passed": s.passed, "failed": s.failed,
            "errors": s.error, "skipped": s.skipped, "vanished": vanished.len(),
        },
        "vanished": &vanished[..vanished.len().min(MAX_IDS_SHOWN)],
    })
}

/// `git rev-parse HEAD` and a SHA-256 of `git diff HEAD` plus the untracked files' names and
/// contents; both `null` outside a git work tree (or without git).
pub(crate) async fn git_state(project: &Path) -> (Option<String>, Option<String>) {
    let Some(head) = git(project, &["rev-parse", "HEAD"]).await else {
        return (None, None);
    };
    let head = String::from_utf8_lossy(&head).trim().to_string();
    let mut excludes: Vec<String> = SKIPPED.iter().map(|d| format!(":(exclude){d}")).collect();
    excludes.insert(0, ".".into());
    let mut diff_args = vec![
        "diff",
        "HEAD",
        "--binary",
        "--no-color",
        "--no-ext-diff",
        "--",
    ];
    diff_args.extend(excludes.iter().map(String::as_str));
    let Some(diff) = git(project, &diff_args).await else {
        return (Some(head), None);
    };
    let mut untracked_args = vec!["ls-files", "--others", "--exclude-standard", "-z", "--"];
    untracked_args.extend(excludes.iter().map(String::as_str));
    let untracked = git(project, &untracked_args).await.unwrap_or_default();
    let mut hasher = Sha256::new();
    hasher.update(&diff);
    for rel in untracked.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let rel = String::from_utf8_lossy(rel).into_owned();
        if rel.split('/').any(|part| SKIPPED.contains(&part)) {
            continue;
        }
        hasher.update(rel.as_bytes());
        hasher.update(std::fs::read(project.join(&rel)).unwrap_or_default());
    }
    let hash: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    (Some(head), Some(hash))
}

async fn git(project: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(project)
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .await
        .ok()?;
    out.status.success().then_some(out.stdout)
}
