//! The task's starting point, recorded before its first run: a copy of every file a verdict
//! re-run takes from the start ([`super::pinned`]), the git HEAD and working-tree diff hash,
//! and — after the first full run — each test's outcome there.

use super::pinned::pinned;
use crate::cycles::{Observed, Verdict};
use crate::edits::Policy;
use crate::roles::tree_watch::TreeState;
use std::collections::BTreeMap;
use std::path::Path;

/// Where the task began.
pub(crate) struct Origin {
    /// The pinned files as they were, under their relative paths.
    files: tempfile::TempDir,
    /// Their relative paths.
    kept: Vec<String>,
    /// The edit policy the pinned files were chosen under.
    pub policy: Policy,
    /// `git rev-parse HEAD` at the start, when the project is a git work tree.
    pub git_head: Option<String>,
    /// The working tree's diff against HEAD at the start, hashed.
    pub diff_hash: Option<String>,
    /// Each test's verdict in the first full run.
    pub first_run: BTreeMap<String, Verdict>,
}

impl Origin {
    /// Records `project` as it is now.
    pub async fn capture(project: &Path, policy: &Policy) -> std::io::Result<Origin> {
        let (git_head, diff_hash) = crate::roles::evidence::git_state(project).await;
        let project = project.to_path_buf();
        let policy = policy.clone();
        tokio::task::spawn_blocking(move || {
            let files = tempfile::Builder::new()
                .prefix("huddle-origin-")
                .tempdir()?;
            let mut kept = Vec::new();
            for rel in TreeState::capture(&project).paths() {
                if !pinned(rel, &policy) {
                    continue;
                }
                let to = files.path().join(rel);
                if let Some(dir) = to.parent() {
                    std::fs::create_dir_all(dir)?;
                }
                std::fs::copy(project.join(rel), &to)?;
                kept.push(rel.clone());
            }
            Ok(Origin {
                files,
                kept,
                policy,
                git_head,
                diff_hash,
                first_run: BTreeMap::new(),
            })
        })
        .await
        .map_err(std::io::Error::other)?
    }

    /// Notes the first full run's outcomes (later runs leave them).
    pub fn first_full_run(&mut self, tests: &[Observed]) {
        if self.first_run.is_empty() {
            self.first_run = tests.iter().map(|t| (t.id.clone(), t.verdict)).collect();
        }
    }

    /// Puts the pinned files into `copy` as they were, after removing every pinned file the
    /// copy holds now (added or changed since the start).
    pub fn restore_into(&self, copy: &Path) -> std::io::Result<()> {
        for rel in TreeState::capture(copy).paths() {
            if pinned(rel, &self.policy) {
                std::fs::remove_file(copy.join(rel))?;
            }
        }
        for rel in &self.kept {
            let to = copy.join(rel);
            if let Some(dir) = to.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::copy(self.files.path().join(rel), &to)?;
        }
        Ok(())
    }

    /// How many files are pinned.
    pub fn pinned_count(&self) -> usize {
        self.kept.len()
    }
}
