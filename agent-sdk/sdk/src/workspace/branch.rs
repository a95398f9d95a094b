//! A fix delivered as a branch: the files the cycle changed, committed in the task's worktree
//! on `huddle/<task id>`, which the user's repository sees at once (worktrees share its refs).

use super::git::git;
use serde_json::{json, Value};
use std::path::Path;

/// The branch a task's fix goes to.
pub fn branch_name(task_id: &str) -> String {
    let safe: String = task_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("huddle/{}", safe.trim_matches('.'))
}

/// What a delivery made.
#[derive(Debug, Clone)]
pub struct Delivered {
    pub branch: String,
    pub commit: String,
    pub base: String,
}

impl Delivered {
    /// The task result's and `test_result`'s fields.
    pub fn fields(&self) -> Value {
        json!({"branch": self.branch, "commit": self.commit, "base": self.base})
    }
}

/// Commits `files` (relative to `sub` in the worktree `top`) on `branch` from `base`, with
/// `message`; the worktree is left detached so that the user can check the branch out.
pub(crate) async fn commit_branch(
    top: &Path,
    sub: &Path,
    files: &[String],
    branch: &str,
    base: &str,
    message: &str,
) -> Result<Delivered, String> {
    let paths: Vec<String> = files
        .iter()
        .map(|f| sub.join(f).to_string_lossy().into_owned())
        .collect();
    git(top, &["checkout", "--quiet", "-B", branch]).await?;
    let committed = async {
        let mut add = vec!["add", "--all", "--"];
        add.extend(paths.iter().map(String::as_str));
        git(top, &add).await?;
        let mut commit = identity(top).await;
        commit.extend(
            ["commit", "--quiet", "--no-verify", "-m", message]
                .iter()
                .map(|s| s.to_string()),
        );
        let args: Vec<&str> = commit.iter().map(String::as_str).collect();
        git(top, &args).await?;
        git(top, &["rev-parse", "HEAD"]).await
    }
    .await;
    // Whatever happened, the branch is not left checked out here: a checkout of it in the
    // user's tree would be refused while a worktree holds it.
    let _ = git(top, &["checkout", "--quiet", "--detach"]).await;
    match committed {
        Ok(commit) => Ok(Delivered {
            branch: branch.to_string(),
            commit,
            base: base.to_string(),
        }),
        Err(e) => {
            let _ = git(top, &["branch", "--quiet", "-D", branch]).await;
            Err(e)
        }
    }
}

/// `-c user.name=… -c user.email=…` when the repository has no identity of its own (a
/// worker on a fresh machine), so that a commit never fails for want of one.
async fn identity(top: &Path) -> Vec<String> {
    let mut args = Vec::new();
    if git(top, &["config", "user.name"]).await.is_err() {
        args.extend(["-c".into(), "user.name=huddle".into()]);
    }
    if git(top, &["config", "user.email"]).await.is_err() {
        args.extend(["-c".into(), "user.email=huddle@localhost".into()]);
    }
    args.extend(["-c".into(), "commit.gpgsign=false".into()]);
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_names_are_refs_git_accepts() {
        assert_eq!(branch_name("TEST-001"), "huddle/TEST-001");
        assert_eq!(branch_name("QARUN 7:x"), "huddle/QARUN-7-x");
        assert_eq!(branch_name("..a"), "huddle/a");
    }
}
