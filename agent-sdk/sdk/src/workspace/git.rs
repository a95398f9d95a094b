//! The few git commands a workspace needs, run as child processes (the user's git, with the
//! user's configuration), each returning its trimmed output or an error that names the command.

use std::path::{Path, PathBuf};
use tokio::process::Command;

/// Runs `git -C dir args…`; the error carries git's own words.
pub(crate) async fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        // No hook runs: a worktree's files (a `.husky` directory a hooks path names) may have
        // been written by a model.
        .args(["-c", "core.hooksPath=/dev/null"])
        .args(args)
        // Never a prompt (credentials, an editor) from a worker nobody watches.
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_EDITOR", "true")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| format!("git {}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Where a project lives in its repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Repo {
    /// The checkout's top directory.
    pub top: PathBuf,
    /// The repository's shared git directory (the main one's, seen from any worktree).
    pub common_dir: PathBuf,
    /// The project's directory relative to `top` (empty at the top).
    pub sub: PathBuf,
}

impl Repo {
    /// The repository `project` is in, or `None` when it is in none (or git is missing).
    pub(crate) async fn of(project: &Path) -> Option<Repo> {
        let project = project.canonicalize().ok()?;
        let top = PathBuf::from(
            git(&project, &["rev-parse", "--show-toplevel"])
                .await
                .ok()?,
        );
        let common = git(&project, &["rev-parse", "--git-common-dir"])
            .await
            .ok()?;
        let common_dir = absolute(&project, Path::new(&common));
        let top = top.canonicalize().ok()?;
        let sub = project.strip_prefix(&top).ok()?.to_path_buf();
        Some(Repo {
            top,
            common_dir,
            sub,
        })
    }

    /// The commit `reference` names in this repository.
    pub(crate) async fn commit_of(&self, reference: &str) -> Result<String, String> {
        if reference.starts_with('-') {
            return Err(format!("`{reference}` is not a git revision"));
        }
        git(
            &self.top,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{reference}^{{commit}}"),
            ],
        )
        .await
        .map_err(|_| format!("`{reference}` names no commit in {}", self.top.display()))
    }

    /// Tracked files the checkout changed (uncommitted), at most a few named.
    pub(crate) async fn uncommitted(&self) -> Vec<String> {
        git(
            &self.top,
            &["status", "--porcelain", "--untracked-files=no"],
        )
        .await
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.get(3..))
        .map(str::to_string)
        .collect()
    }
}

fn absolute(base: &Path, path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    joined.canonicalize().unwrap_or(joined)
}
