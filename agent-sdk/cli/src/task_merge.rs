//! `huddle task merge ID`: brings a task's fix branch (`huddle/<id>`, named in its result) into
//! the current branch of a checkout, as a merge or, with `--rebase`, as its commits replayed on
//! top. A conflict leaves the checkout as it was and is told to the coordinators as
//! `fix_required` (category `merge_conflict`), naming the files.

use crate::{output, CliResult, Ctx};
use huddle_sdk::wire::PostMessage;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

/// Merges (or replays, `rebase`) task `id`'s branch in the checkout at `dir`.
pub async fn merge(ctx: &Ctx, id: &str, rebase: bool, dir: &Path) -> CliResult {
    let task = ctx.client.get_task(id).await?;
    let result = task.result.clone().unwrap_or(Value::Null);
    let (Some(branch), Some(commit)) = (result["branch"].as_str(), result["commit"].as_str())
    else {
        return Err(format!(
            "{id} names no fix branch in its result (it {}; a branch is made when a fix in a \
             worktree meets the gate)",
            match task.result {
                Some(_) => "made no change, or worked in place",
                None => "has no result yet",
            }
        )
        .into());
    };
    let base = result["base"].as_str().unwrap_or_default();
    // The result is the holder's word, handed to git as arguments: a branch that git would
    // read as an option, or a commit that is not one, is refused before git sees it.
    check_branch(dir, branch)?;
    for (field, value) in [("commit", commit), ("base", base)] {
        // A merge needs no base; a replay does (`base..branch`).
        let optional = field == "base" && value.is_empty() && !rebase;
        if !(optional || is_commit_id(value)) {
            return Err(format!(
                "{id}'s result names a {field} that is not a commit id: {value:?}"
            )
            .into());
        }
    }
    match git(dir, &["rev-parse", "--verify", "--quiet", branch]) {
        Ok(at) if at != commit => eprintln!(
            "huddle: {branch} moved since {id} committed {} (now {}): using the branch",
            short(commit),
            short(&at)
        ),
        Ok(_) => {}
        Err(_) => return Err(format!("{branch} is not a branch in {}", dir.display()).into()),
    }
    let applied = if rebase {
        let range = format!("{base}..{branch}");
        git(dir, &["cherry-pick", "--allow-empty", &range]).map_err(|e| (e, "cherry-pick"))
    } else {
        let message = format!("Merge {branch} ({id})");
        git(dir, &["merge", "--no-ff", "-m", &message, branch]).map_err(|e| (e, "merge"))
    };
    let Err((why, verb)) = applied else {
        let head = git(dir, &["rev-parse", "HEAD"]).unwrap_or_default();
        let how = if rebase { "replayed" } else { "merged" };
        return output::line(&format!("{id}: {branch} {how}; HEAD is {}", short(&head)));
    };
    let conflicted: Vec<String> = git(dir, &["diff", "--name-only", "--diff-filter=U"])
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    // The checkout goes back to where it was, conflict or not.
    let _ = git(dir, &[verb, "--abort"]);
    if conflicted.is_empty() {
        return Err(format!("git {verb} of {branch} failed: {why}").into());
    }
    let current = git(dir, &["branch", "--show-current"]).unwrap_or_default();
    let reason = format!(
        "{branch} conflicts with {} in {}",
        if current.is_empty() { "HEAD" } else { &current },
        conflicted.join(", ")
    );
    let message = PostMessage {
        to: "coordinator".into(),
        kind: "fix_required".into(),
        summary: format!("{id}: {reason}"),
        data: json!({
            "taskId": id, "category": "merge_conflict", "reason": reason,
            "branch": branch, "commit": commit, "base": base, "into": current,
            "files": conflicted, "tests": [],
        }),
    };
    let told = match ctx.client.post_message(&message).await {
        Ok(_) => "the coordinators were told (fix_required)".to_string(),
        Err(e) => format!("telling the coordinators failed: {e}"),
    };
    Err(format!("{id}: {reason}; the {verb} was aborted, the checkout is as it was; {told}").into())
}

/// A branch name git accepts as one (`git check-ref-format --branch`), never an option.
fn check_branch(dir: &Path, branch: &str) -> Result<(), String> {
    let valid = !branch.starts_with('-')
        && git(dir, &["check-ref-format", "--branch", branch]).is_ok_and(|b| b == branch);
    if valid {
        Ok(())
    } else {
        Err(format!(
            "the task's result names a branch git would not take as one: {branch:?}"
        ))
    }
}

/// 40 (SHA-1) or 64 (SHA-256) hexadecimal digits.
fn is_commit_id(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Runs `git -C dir args…`: its trimmed output, or git's own words.
fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_EDITOR", "true")
        .output()
        .map_err(|e| format!("git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}
