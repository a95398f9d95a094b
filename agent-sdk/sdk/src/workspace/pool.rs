//! A per-repository pool of git worktrees, shared by every worker process on that repository.
//!
//! The pool lives outside the checkout, under the worktrees root (`--worktrees`, else
//! `$XDG_CACHE_HOME/huddle/worktrees`, else `~/.cache/huddle/worktrees`), in a directory per
//! repository (`<name>-<hash of its git directory>/wt-N`). Not inside the repository's `.git`:
//! jest and vitest ignore every file whose path crosses a `.git` directory. Each slot has a
//! lock file beside it (`wt-N.lock`, an exclusive `flock` while a task works in it; its mtime
//! is when it was last used); `pool.lock` is held only while a slot is chosen, created or
//! evicted. A reused slot keeps its ignored files (dependency installs, build output) and is
//! reset and cleaned to the task's base before the task sees it.

use super::git::{git, Repo};
use sha2::{Digest, Sha256};
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Dependency directories linked from the user's checkout into a new worktree, so that a
/// worktree runs with what was installed there instead of installing again.
const LINKED: &[&str] = &["node_modules", ".venv", "venv"];

/// The default number of worktrees kept per repository.
pub const DEFAULT_POOL_SIZE: usize = 4;

/// In a pool's directory: the git directory of its repository.
const REPO_FILE: &str = "repository";

/// Where pools live by default: `$XDG_CACHE_HOME/huddle/worktrees`, else
/// `$HOME/.cache/huddle/worktrees`, else the temporary directory's `huddle-worktrees`.
pub fn default_root() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")));
    match cache {
        Some(cache) => cache.join("huddle").join("worktrees"),
        None => std::env::temp_dir().join("huddle-worktrees"),
    }
}

/// A repository's pool.
#[derive(Debug, Clone)]
pub(crate) struct Pool {
    pub repo: Repo,
    dir: PathBuf,
    bound: usize,
}

/// A worktree held by one task until dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    /// The worktree's top directory.
    pub path: PathBuf,
    _lock: File,
}

/// What taking a slot came to.
pub(crate) enum Taken {
    Slot(Slot),
    /// Every slot is in use and the pool is at its bound.
    Full,
}

impl Pool {
    /// The pool of `repo` under `root` (see [`default_root`]).
    pub(crate) fn new(repo: Repo, bound: usize, root: &Path) -> Pool {
        let name = repo
            .top
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "repo".into());
        let digest = Sha256::digest(repo.common_dir.to_string_lossy().as_bytes());
        let hash: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
        let dir = root.join(format!("{name}-{hash}"));
        Pool {
            repo,
            dir,
            bound: bound.max(1),
        }
    }

    /// The pool's directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// After a crash: git forgets worktrees whose directories are gone, and directories git
    /// does not know as worktrees (a half-made slot) are removed, unless a live task holds them.
    pub(crate) async fn tidy(&self) {
        self.forget_deleted_repositories();
        let _ = git(&self.repo.top, &["worktree", "prune"]).await;
        let Ok(known) = git(&self.repo.top, &["worktree", "list", "--porcelain"]).await else {
            return;
        };
        let known: Vec<PathBuf> = known
            .lines()
            .filter_map(|l| l.strip_prefix("worktree "))
            .map(|p| Path::new(p).canonicalize().unwrap_or_else(|_| p.into()))
            .collect();
        for (name, path) in self.slots() {
            let canonical = path.canonicalize().unwrap_or_else(|_| path.clone());
            if known.contains(&canonical) {
                continue;
            }
            if let Ok(Some(_held)) = self.try_lock_slot(&name) {
                tracing::info!(
                    "removing {}, a worktree git no longer knows",
                    path.display()
                );
                let _ = std::fs::remove_dir_all(&path);
                let _ = std::fs::remove_file(self.lock_path(&name));
            }
        }
    }

    /// Pools beside this one whose repository is gone (a deleted clone) are removed whole.
    fn forget_deleted_repositories(&self) {
        let Some(root) = self.dir.parent() else {
            return;
        };
        let Ok(entries) = std::fs::read_dir(root) else {
            return;
        };
        for pool in entries.flatten().map(|e| e.path()) {
            let Ok(repo) = std::fs::read_to_string(pool.join(REPO_FILE)) else {
                continue;
            };
            if pool != self.dir && !Path::new(repo.trim()).exists() {
                tracing::info!(
                    "removing {}: its repository {} is gone",
                    pool.display(),
                    repo.trim()
                );
                let _ = std::fs::remove_dir_all(&pool);
            }
        }
    }

    /// A slot at `base` (reset and cleaned), or [`Taken::Full`].
    pub(crate) async fn take(&self, base: &str) -> Result<Taken, String> {
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| format!("cannot create {}: {e}", self.dir.display()))?;
        // Which repository the pool is for, so that a later tidy can tell when it is gone.
        let _ = std::fs::write(
            self.dir.join(REPO_FILE),
            self.repo.common_dir.to_string_lossy().as_bytes(),
        );
        let pool_lock = self.lock_pool().await?;
        let mut slots = self.slots();
        // The most recently used first: its installs and build output are the warmest.
        slots.sort_by_key(|(name, _)| std::cmp::Reverse(self.used_at(name)));
        let mut chosen = None;
        for (name, path) in &slots {
            if let Ok(Some(lock)) = self.try_lock_slot(name) {
                chosen = Some((path.clone(), lock, true));
                break;
            }
        }
        if chosen.is_none() && slots.len() < self.bound {
            let name = self.free_name(&slots);
            let lock = self
                .try_lock_slot(&name)?
                .ok_or_else(|| format!("{name}: locked by another process"))?;
            chosen = Some((self.dir.join(&name), lock, false));
        }
        let Some((path, lock, existed)) = chosen else {
            return Ok(Taken::Full);
        };
        self.evict_beyond_bound(&slots, &path).await;
        drop(pool_lock);

        let ready = if existed {
            self.reset(&path, base).await
        } else {
            Err(String::new())
        };
        if let Err(why) = ready {
            if existed {
                tracing::warn!("{}: {why}; making it again", path.display());
                self.remove(&path).await;
            }
            let at = path.to_string_lossy().into_owned();
            git(
                &self.repo.top,
                &["worktree", "add", "--detach", "--force", &at, base],
            )
            .await?;
        }
        self.link_dependencies(&path);
        let name = slot_name(&path);
        if let Ok(f) = File::options().write(true).open(self.lock_path(&name)) {
            let _ = f.set_modified(SystemTime::now());
        }
        Ok(Taken::Slot(Slot { path, _lock: lock }))
    }

    /// Puts a reused worktree at `base` with nothing left of the last task: tracked files as
    /// committed, untracked ones removed; ignored ones (installs, build output) kept.
    async fn reset(&self, path: &Path, base: &str) -> Result<(), String> {
        git(path, &["checkout", "--quiet", "--force", "--detach", base]).await?;
        git(path, &["reset", "--quiet", "--hard", base]).await?;
        git(path, &["clean", "-ffdq"]).await?;
        Ok(())
    }

    /// Removes the least recently used slots no task holds while the pool is over its bound
    /// (the bound was lowered, or slots were left by a larger pool).
    async fn evict_beyond_bound(&self, slots: &[(String, PathBuf)], keep: &Path) {
        let mut count = slots.len() + usize::from(!slots.iter().any(|(_, p)| p == keep));
        let mut oldest: Vec<&(String, PathBuf)> = slots.iter().filter(|(_, p)| p != keep).collect();
        oldest.sort_by_key(|(name, _)| self.used_at(name));
        for (name, path) in oldest {
            if count <= self.bound {
                break;
            }
            if let Ok(Some(_held)) = self.try_lock_slot(name) {
                tracing::info!(
                    "evicting {}, the least recently used worktree",
                    path.display()
                );
                self.remove(path).await;
                let _ = std::fs::remove_file(self.lock_path(name));
                count -= 1;
            }
        }
    }

    async fn remove(&self, path: &Path) {
        let at = path.to_string_lossy().into_owned();
        let _ = git(
            &self.repo.top,
            &["worktree", "remove", "--force", "--force", &at],
        )
        .await;
        let _ = std::fs::remove_dir_all(path);
        let _ = git(&self.repo.top, &["worktree", "prune"]).await;
    }

    /// Links the checkout's dependency directories where the worktree has none (git's clean
    /// removes a link that `.gitignore` names as a directory, so this runs at every take).
    fn link_dependencies(&self, path: &Path) {
        let from = self.repo.top.join(&self.repo.sub);
        let to = path.join(&self.repo.sub);
        for name in LINKED {
            let (source, target) = (from.join(name), to.join(name));
            if source.is_dir() && target.symlink_metadata().is_err() {
                #[cfg(unix)]
                if let Err(e) = std::os::unix::fs::symlink(&source, &target) {
                    tracing::warn!("cannot link {}: {e}", target.display());
                }
            }
        }
    }

    /// The pool's slots: (name, path), in no order.
    fn slots(&self) -> Vec<(String, PathBuf)> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.starts_with("wt-").then(|| (name, e.path()))
            })
            .collect()
    }

    fn free_name(&self, slots: &[(String, PathBuf)]) -> String {
        (1..)
            .map(|n| format!("wt-{n}"))
            .find(|n| !slots.iter().any(|(s, _)| s == n) && !self.dir.join(n).exists())
            .expect("a free name")
    }

    fn lock_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.lock"))
    }

    /// When the slot was last taken (its lock file's mtime).
    fn used_at(&self, name: &str) -> SystemTime {
        std::fs::metadata(self.lock_path(name))
            .and_then(|m| m.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH)
    }

    /// The slot's lock when no one holds it, `None` when someone does.
    fn try_lock_slot(&self, name: &str) -> Result<Option<File>, String> {
        let path = self.lock_path(name);
        let file = open_lock_file(&path)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(file)),
            Err(TryLockError::WouldBlock) => Ok(None),
            Err(TryLockError::Error(e)) => Err(format!("cannot lock {}: {e}", path.display())),
        }
    }

    /// The pool-wide lock, held while a slot is chosen (briefly: no git command runs under it
    /// but an eviction's).
    async fn lock_pool(&self) -> Result<File, String> {
        let path = self.dir.join("pool.lock");
        let file = open_lock_file(&path)?;
        tokio::task::spawn_blocking(move || file.lock().map(|()| file))
            .await
            .map_err(|e| format!("locking the worktree pool: {e}"))?
            .map_err(|e| format!("cannot lock {}: {e}", path.display()))
    }
}

/// A lock file, made if missing and never truncated (its mtime says when a slot was used).
fn open_lock_file(path: &Path) -> Result<File, String> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))
}

fn slot_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
