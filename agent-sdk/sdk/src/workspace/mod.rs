//! Where a task's cycle works: its own git worktree from a per-repository pool, so that testers
//! on one repository repair in parallel and the user's checkout is never edited; or, without
//! git or with `--workspace in-place`, the checkout itself under its lock (one task at a time).
//!
//! - `git.rs`: the git commands.
//! - `pool.rs`: the worktree pool (per repository, outside the checkout, shared by worker
//!   processes, bounded, least recently used evicted, leftovers of a crash cleaned at the next
//!   start).
//! - [`branch`]: a fix delivered as a commit on `huddle/<task id>`.
//!
//! [`branch`]: crate::workspace::branch

pub mod branch;
pub(crate) mod git;
pub(crate) mod pool;

pub use branch::{branch_name, Delivered};
pub use pool::{default_root, DEFAULT_POOL_SIZE};

use crate::roles::checkout::{lock_checkout, CheckoutLock};
use crate::roles::setup::report_failure;
use crate::roles::{Reporter, RoleError};
use crate::worker::{HandlerError, TaskContext};
use git::Repo;
use pool::{Pool, Slot, Taken};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Mutex;
use std::time::Duration;

/// How a worker chooses where a task works.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WorkspaceMode {
    /// A worktree per claim when the project is in a git repository, else in place.
    #[default]
    Worktree,
    /// The checkout itself, one task at a time (its lock).
    InPlace,
}

impl FromStr for WorkspaceMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "worktree" => Ok(WorkspaceMode::Worktree),
            "in-place" => Ok(WorkspaceMode::InPlace),
            other => Err(format!(
                "`{other}` is not a workspace mode (worktree or in-place)"
            )),
        }
    }
}

/// The workspace settings of a worker.
#[derive(Debug, Clone)]
pub struct WorkspaceSettings {
    pub mode: WorkspaceMode,
    /// Worktrees kept per repository.
    pub pool_size: usize,
    /// Commit a failed verdict's changes on `huddle/<task id>` too (for a person to look at).
    pub keep_failed: bool,
    /// Where the pools live (default [`default_root`]).
    pub root: Option<PathBuf>,
}

impl Default for WorkspaceSettings {
    fn default() -> Self {
        WorkspaceSettings {
            mode: WorkspaceMode::Worktree,
            pool_size: DEFAULT_POOL_SIZE,
            keep_failed: false,
            root: None,
        }
    }
}

/// A task's workspace, held until dropped.
#[derive(Debug)]
pub struct Workspace {
    /// The project's directory in it: where tests run and fixes go.
    pub project: PathBuf,
    held: Held,
}

#[derive(Debug)]
enum Held {
    InPlace(#[allow(dead_code)] Option<CheckoutLock>),
    Worktree {
        slot: Slot,
        repo: Repo,
        base: String,
    },
}

/// Pools tidied by this process (a crash's leftovers are cleaned once, at the first claim).
static TIDIED: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

/// How often a worker whose pool is full looks for a freed worktree.
const FULL_POLL: Duration = Duration::from_millis(250);

impl Workspace {
    /// The workspace for a task on `project`: a worktree at the task's `baseRef` (else HEAD),
    /// or the checkout under its lock. Posts `impl_progress` saying which (phase `workspace`).
    pub async fn acquire(
        project: &Path,
        settings: &WorkspaceSettings,
        task: &crate::wire::Task,
        reporter: &Reporter,
        ctx: &TaskContext,
    ) -> Result<Workspace, HandlerError> {
        let base_ref = task.metadata.get("baseRef").and_then(Value::as_str);
        let mut repo = match settings.mode {
            WorkspaceMode::Worktree => Repo::of(project).await,
            WorkspaceMode::InPlace => None,
        };
        // A repository without a commit yet has nothing to make a worktree from.
        if let (Some(r), None) = (&repo, base_ref) {
            if r.commit_of("HEAD").await.is_err() {
                tracing::info!(
                    "{}: no commit yet in {}: working in place",
                    task.id,
                    r.top.display()
                );
                repo = None;
            }
        }
        let Some(repo) = repo else {
            if let Some(base) = base_ref {
                tracing::warn!(
                    "{}: baseRef {base} ignored: the task works in the checkout as it is",
                    task.id
                );
            }
            let lock = lock_checkout(project, reporter, ctx).await?;
            ctx.set_workspace(crate::wire::WorkspaceNote {
                path: project.to_string_lossy().into_owned(),
                branch: None,
                base: None,
            });
            return Ok(Workspace {
                project: project.to_path_buf(),
                held: Held::InPlace(lock),
            });
        };
        let base = match repo.commit_of(base_ref.unwrap_or("HEAD")).await {
            Ok(base) => base,
            Err(e) => {
                let e = RoleError::Config(format!("the task's base: {e}"));
                return Err(report_failure(reporter, e).await);
            }
        };
        if base_ref.is_none() {
            let dirty = repo.uncommitted().await;
            if !dirty.is_empty() {
                tracing::warn!(
                    "{}: the checkout has uncommitted changes ({}); the task works on HEAD as \
                     committed (commit them, or run with --workspace in-place)",
                    task.id,
                    dirty.join(", ")
                );
            }
        }
        let root = settings.root.clone().unwrap_or_else(pool::default_root);
        let pool = Pool::new(repo.clone(), settings.pool_size, &root);
        let first = TIDIED
            .lock()
            .map(|mut t| {
                t.get_or_insert_with(HashSet::new)
                    .insert(pool.dir().to_path_buf())
            })
            .unwrap_or(false);
        if first {
            pool.tidy().await;
        }
        let mut said_waiting = false;
        let slot = loop {
            let taken = match pool.take(&base).await {
                Ok(taken) => taken,
                Err(e) => {
                    // Another try (here or by another worker) may find the pool in order.
                    let why = format!("cannot prepare a worktree: {e}");
                    reporter.error("workspace_failed", &why, "git").await;
                    return Err(why.into());
                }
            };
            match taken {
                Taken::Slot(slot) => break slot,
                Taken::Full if !said_waiting => {
                    said_waiting = true;
                    let text = format!(
                        "{}: waiting for a worktree: all {} of the pool are in use",
                        task.id, settings.pool_size
                    );
                    tracing::info!("{text}");
                    reporter
                        .post(
                            "impl_progress",
                            text,
                            json!({"taskId": task.id, "phase": "waitingForWorkspace"}),
                        )
                        .await;
                }
                Taken::Full => {}
            }
            tokio::select! {
                _ = tokio::time::sleep(FULL_POLL) => {}
                _ = ctx.cancelled() => return Err("cancelled while waiting for a worktree".into()),
            }
        };
        let workspace = Workspace {
            project: slot.path.join(&repo.sub),
            held: Held::Worktree {
                slot,
                repo,
                base: base.clone(),
            },
        };
        let branch = branch_name(&task.id);
        ctx.set_workspace(crate::wire::WorkspaceNote {
            path: workspace.project.to_string_lossy().into_owned(),
            branch: Some(branch.clone()),
            base: Some(base.clone()),
        });
        reporter
            .post(
                "impl_progress",
                format!(
                    "{}: working in {} at {} (a fix goes to {branch})",
                    task.id,
                    workspace.project.display(),
                    &base[..base.len().min(12)]
                ),
                json!({
                    "taskId": task.id,
                    "phase": "workspace",
                    "workspace": workspace.project,
                    "base": base,
                    "branch": branch,
                }),
            )
            .await;
        Ok(workspace)
    }

    /// The worktree's base commit, when the task works in one.
    pub fn base(&self) -> Option<&str> {
        match &self.held {
            Held::Worktree { base, .. } => Some(base),
            Held::InPlace(_) => None,
        }
    }

    /// Commits `files` (relative to the project) on the task's branch; `None` in place or when
    /// nothing changed.
    pub async fn deliver(
        &self,
        task_id: &str,
        files: &[String],
        message: &str,
    ) -> Option<Result<Delivered, String>> {
        let Held::Worktree { slot, repo, base } = &self.held else {
            return None;
        };
        if files.is_empty() {
            return None;
        }
        Some(
            branch::commit_branch(
                &slot.path,
                &repo.sub,
                files,
                &branch_name(task_id),
                base,
                message,
            )
            .await,
        )
    }
}

#[cfg(test)]
mod pool_tests;
