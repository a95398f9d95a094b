//! The tester's link to the daemon's test history: after each full run it posts the run's
//! outcomes for the project's current tree, then asks which tests passed and failed on that
//! same tree before. Such a known-flaky failure is re-run once before any repair is asked for.
//! The history is advice: when the daemon cannot answer, the cycle goes on without it.

use super::evidence::RecordedRun;
use super::report::Reporter;
use crate::cycles::{Observed, Verdict};
use crate::runners::{Outcome, Report};
use crate::wire::{
    NewTestRun, TestOutcome, TestResultRecord, TestRunArtifact, TestRunArtifacts, MAX_RUN_ARTIFACTS,
};
use crate::Client;
use serde_json::json;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// Directories that are not the code under test: VCS data, caches, dependencies, build output.
const SKIPPED_DIRS: &[&str] = &[
    "node_modules",
    "__pycache__",
    "target",
    "venv",
    "dist",
    "build",
];

/// Most files hashed; a larger tree hashes its first files in path order.
const MAX_FILES: usize = 20_000;

/// A content hash of the project's files (paths and bytes, in path order), skipping hidden
/// directories and files, caches and dependencies: two runs on the same code get the same
/// tree, whatever the VCS.
pub fn tree_hash(project: &Path) -> std::io::Result<String> {
    let mut files = Vec::new();
    collect(project, project, &mut files)?;
    files.sort();
    files.truncate(MAX_FILES);
    let mut hasher = Sha256::new();
    for rel in &files {
        let bytes = std::fs::read(project.join(rel))?;
        hasher.update((rel.len() as u64).to_le_bytes());
        hasher.update(rel.as_bytes());
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let kind = entry.file_type()?;
        let path = entry.path();
        if kind.is_dir() {
            if !SKIPPED_DIRS.contains(&name.as_str()) {
                collect(root, &path, out)?;
            }
        } else if kind.is_file() {
            if let Ok(rel) = path.strip_prefix(root) {
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    Ok(())
}

/// The project's stable identity in the history: the task's `project` metadata when it names
/// one, else the checkout's git `origin` (`github.com/org/repo`, the same for every clone),
/// else the project directory's name.
pub async fn project_identity(task_project: Option<&str>, project: &Path) -> String {
    if let Some(p) = task_project.map(str::trim).filter(|p| !p.is_empty()) {
        return p.chars().take(200).collect();
    }
    let origin = tokio::process::Command::new("git")
        .arg("-C")
        .arg(project)
        .args(["config", "--get", "remote.origin.url"])
        .output()
        .await
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match origin.as_deref().and_then(remote_identity) {
        Some(id) => id,
        None => project_name(project),
    }
}

/// The name a checkout's tasks carry in metadata `project` when a coordinator means this
/// checkout: its git `origin` (`github.com/org/repo`), else its directory's name. A worker on
/// the checkout claims with it ([`crate::Worker::project`]).
pub async fn checkout_project(project: &Path) -> String {
    project_identity(None, project).await
}

/// `https://user:token@github.com/org/repo.git` and `git@github.com:org/repo.git` →
/// `github.com/org/repo`: no scheme, no credentials, no `.git`.
pub fn remote_identity(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    // scp-like `host:path` (no scheme): the colon separates host and path.
    let rest = if url.contains("://") {
        rest.to_string()
    } else {
        rest.replacen(':', "/", 1)
    };
    let id = rest
        .trim_end_matches('/')
        .trim_end_matches(".git")
        .trim_start_matches('/')
        .to_string();
    (!id.is_empty()).then(|| id.chars().take(200).collect())
}

/// The project's directory name.
pub fn project_name(project: &Path) -> String {
    project
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "project".into())
}

/// The run's kept files as the history lists them: its directory and each file.
fn run_artifacts(report: &Report, run_dir: Option<&Path>) -> Option<TestRunArtifacts> {
    let dir = run_dir?;
    if report.artifacts.is_empty() {
        return None;
    }
    let files = report
        .artifacts
        .iter()
        .take(MAX_RUN_ARTIFACTS)
        .map(|a| TestRunArtifact {
            path: a.path.clone(),
            kind: serde_json::to_value(a.kind)
                .ok()
                .and_then(|k| k.as_str().map(str::to_string))
                .unwrap_or_default(),
            bytes: a.bytes,
            removed: a.removed,
        })
        .collect();
    Some(TestRunArtifacts {
        run_dir: dir.display().to_string(),
        files,
    })
}

/// One task's use of the history.
pub(crate) struct RunHistory {
    client: Client,
    project: String,
    /// The task the runs verify (`NewTestRun.task`): the daemon checks a completion's evidence
    /// against a run posted for it.
    task: String,
    /// Known-flaky tests on the tree of the last full run: passes and failures there.
    known: BTreeMap<String, (u64, u64)>,
    /// The last full run as recorded: the verdict's evidence.
    pub last: RecordedRun,
}

impl RunHistory {
    /// The history of `name` (the project's stable identity, see [`project_identity`]), for
    /// task `task`.
    pub fn new(client: Client, name: String, task: String) -> RunHistory {
        RunHistory {
            client,
            task,
            last: RecordedRun {
                project: name.clone(),
                ..RecordedRun::default()
            },
            project: name,
            known: BTreeMap::new(),
        }
    }

    /// After a full run of `dir`: posts its outcomes and learns the tests known to be flaky on
    /// this tree. Returns their ids.
    pub async fn record(
        &mut self,
        dir: &Path,
        report: &Report,
        run_dir: Option<&Path>,
    ) -> Vec<String> {
        let tree = match tokio::task::spawn_blocking({
            let dir = dir.to_path_buf();
            move || tree_hash(&dir)
        })
        .await
        {
            Ok(Ok(t)) => t,
            Ok(Err(e)) => {
                tracing::warn!("cannot hash the project for the test history: {e}");
                return Vec::new();
            }
            Err(e) => {
                tracing::warn!("hashing the project failed: {e}");
                return Vec::new();
            }
        };
        let run = NewTestRun {
            project: self.project.clone(),
            tree: tree.clone(),
            started_at: None,
            tier: None,
            task: Some(self.task.clone()),
            artifacts: run_artifacts(report, run_dir),
            outcomes: records(report),
        };
        self.last.tree = Some(tree.clone());
        self.last.run_id = match self.client.post_test_run(&run).await {
            Ok(stored) => Some(stored.id),
            Err(e) => {
                tracing::warn!("cannot post the run to the test history: {e}");
                None
            }
        };
        self.known = match self
            .client
            .flaky_tests(Some(&self.project), Some(&tree))
            .await
        {
            Ok(f) => f
                .tests
                .into_iter()
                .map(|t| (t.nodeid, (t.passes, t.failures)))
                .collect(),
            Err(e) => {
                tracing::warn!("cannot read flaky tests from the test history: {e}");
                BTreeMap::new()
            }
        };
        self.known.keys().cloned().collect()
    }

    /// After a tiered full run: posts each tier that ran as its own run (`tier` set), on the
    /// tree the whole run was posted with, so each tier has its own trend and regressions.
    pub async fn record_tiers(&mut self, tiers: &crate::runners::tiers::pipeline::TiersReport) {
        let Some(tree) = self.last.tree.clone() else {
            return;
        };
        for t in tiers.tiers.iter().filter(|t| t.skipped.is_none()) {
            let run = NewTestRun {
                project: self.project.clone(),
                tree: tree.clone(),
                started_at: None,
                tier: Some(t.tier.as_str().to_string()),
                task: Some(self.task.clone()),
                artifacts: None,
                outcomes: t.reports.iter().flat_map(records).collect(),
            };
            if let Err(e) = self.client.post_test_run(&run).await {
                tracing::warn!("cannot post the {} tier to the test history: {e}", t.tier);
            }
        }
    }

    /// Says on the bus what the re-run of each known-flaky test gave.
    pub async fn report_reruns(&self, reporter: &Reporter, rerun: &[Observed]) {
        let task_id = reporter.task_id();
        for t in rerun {
            let Some((passes, failures)) = self.known.get(&t.id) else {
                continue;
            };
            let result = if t.verdict == Verdict::Fail {
                "still fails"
            } else {
                "passed"
            };
            let summary = format!(
                "{task_id}: {} is known flaky ({passes} passes, {failures} failures on this tree); re-ran: {result}",
                t.id
            );
            let data = json!({
                "taskId": task_id, "test": t.id, "knownFlaky": true,
                "passes": passes, "failures": failures, "rerun": result,
            });
            reporter.post("impl_progress", summary, data).await;
        }
    }
}

/// A report's tests as history records (synthetic entries left out).
fn records(report: &Report) -> Vec<TestResultRecord> {
    report
        .tests
        .iter()
        .filter(|t| !t.is_synthetic())
        .map(|t| TestResultRecord {
            nodeid: t.nodeid.clone(),
            outcome: match t.outcome {
                Outcome::Passed => TestOutcome::Passed,
                Outcome::Failed => TestOutcome::Failed,
                Outcome::Skipped => TestOutcome::Skipped,
                Outcome::Error => TestOutcome::Error,
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{remote_identity, tree_hash};

    #[test]
    fn a_remote_names_the_project_without_credentials() {
        for url in [
            "https://ci:s3cr3t@github.com/acme/shop.git",
            "git@github.com:acme/shop.git",
            "ssh://git@github.com/acme/shop",
        ] {
            assert_eq!(
                remote_identity(url).as_deref(),
                Some("github.com/acme/shop"),
                "{url}"
            );
        }
        assert_eq!(remote_identity(""), None);
    }

    #[test]
    fn the_tree_hash_follows_content_and_ignores_caches() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
        let first = tree_hash(dir.path()).unwrap();
        std::fs::create_dir(dir.path().join("__pycache__")).unwrap();
        std::fs::write(dir.path().join("__pycache__/a.pyc"), "junk").unwrap();
        std::fs::write(dir.path().join(".counter"), "3").unwrap();
        assert_eq!(tree_hash(dir.path()).unwrap(), first);
        std::fs::write(dir.path().join("a.py"), "x = 2\n").unwrap();
        assert_ne!(tree_hash(dir.path()).unwrap(), first);
    }
}
