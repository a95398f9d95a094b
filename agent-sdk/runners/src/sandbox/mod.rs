//! Test runs in a bubblewrap (`bwrap`) sandbox: the host's file system read-only, writes only
//! in the workspace, its run directories and a private `/tmp`; the home directories hidden
//! behind empty tmpfs mounts; no network but a private loopback; its own PID namespace and
//! session, gone with huddle. [`Sandbox`] is the caller's choice (`auto`, `required`, `off`);
//! [`Jail`] turns an [`Invocation`] into the same command run inside bwrap (`args.rs`); a tier's
//! services and its tests share one network namespace, held open by a [`NetNs`] ([`netns`]).
//!
//! Every process [`crate::process`] starts inside [`confined`] runs wrapped: the suite and
//! the helpers an adapter runs (doc tests, retries). SECURITY.md says what this stops and
//! what it does not.

mod args;
pub mod cargo_sources;
mod go_cache;
pub mod netns;
mod probe;

pub use netns::NetNs;
pub use probe::{probe, BWRAP_ENV};

use crate::error::RunnerError;
use crate::process::Invocation;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};

/// Whether test runs go into a sandbox.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Sandbox {
    /// In bwrap when it is installed and can create namespaces; otherwise as without, saying
    /// once why.
    #[default]
    Auto,
    /// In bwrap, or an error before any test runs.
    Required,
    /// No sandbox.
    Off,
}

/// The process-wide mode [`Sandbox::process_default`] returns (0 auto, 1 required, 2 off).
static PROCESS_DEFAULT: AtomicU8 = AtomicU8::new(0);

impl Sandbox {
    /// The mode runs take when their caller sets none: what [`Sandbox::set_process_default`]
    /// set (`huddle worker --sandbox`), else `auto`. [`crate::RunOptions::default`] uses it, so
    /// every run of a worker follows the flag without each role passing it on.
    pub fn process_default() -> Sandbox {
        match PROCESS_DEFAULT.load(Ordering::Relaxed) {
            1 => Sandbox::Required,
            2 => Sandbox::Off,
            _ => Sandbox::Auto,
        }
    }

    /// Sets the mode of [`Sandbox::process_default`].
    pub fn set_process_default(mode: Sandbox) {
        let v = match mode {
            Sandbox::Auto => 0,
            Sandbox::Required => 1,
            Sandbox::Off => 2,
        };
        PROCESS_DEFAULT.store(v, Ordering::Relaxed);
    }

    /// The bwrap to run under, or `None` for no sandbox: `off`, or `auto` without a working
    /// bwrap (said once on stderr). `required` without one is an error naming why.
    pub fn resolve(self) -> Result<Option<PathBuf>, RunnerError> {
        match self {
            Sandbox::Off => Ok(None),
            Sandbox::Auto => match probe() {
                Ok(bwrap) => Ok(Some(bwrap)),
                Err(why) => {
                    probe::say_fallback_once(&why);
                    Ok(None)
                }
            },
            Sandbox::Required => probe()
                .map(Some)
                .map_err(|why| RunnerError::Sandbox(format!("--sandbox required: {why}"))),
        }
    }
}

/// A sandbox for commands: bwrap, the directories they may write, and the network namespace
/// they join (`None`: a fresh one with only loopback).
#[derive(Debug, Clone)]
pub struct Jail {
    bwrap: PathBuf,
    /// (directory, path it is mounted at).
    writable: Vec<(PathBuf, PathBuf)>,
    net: Option<NetNs>,
    /// `--new-session`: off for services, so that stopping their process group reaches
    /// them (SIGTERM first) as it does without a sandbox.
    new_session: bool,
    /// `GOCACHE` for a Go project (`sandbox/go_cache.rs`).
    go_cache: Option<PathBuf>,
}

/// Dependency directories a workspace links from the checkout (the worktree pool and the
/// verdict's clean copy link them).
pub const LINKED_DEPENDENCIES: &[&str] = &["node_modules", ".venv", "venv"];

impl Jail {
    /// A sandbox that may write in `writable` (made absolute and free of symlinks; missing
    /// directories are left out), and in the directories its dependency links point to
    /// ([`LINKED_DEPENDENCIES`]: a worktree's or a copy's linked installs, which may live
    /// in a hidden home; vite and jest write their caches into `node_modules`).
    pub fn new(bwrap: PathBuf, writable: &[&Path]) -> Jail {
        let mut dirs: Vec<(PathBuf, PathBuf)> = Vec::new();
        let mut add = |dir: PathBuf, at: PathBuf| {
            if !dirs.contains(&(dir.clone(), at.clone())) {
                dirs.push((dir, at));
            }
        };
        for dir in writable {
            let Ok(real) = dir.canonicalize() else {
                continue;
            };
            add(real.clone(), real.clone());
            for name in LINKED_DEPENDENCIES {
                let link = real.join(name);
                let Ok(target) = link.canonicalize() else {
                    continue;
                };
                add(target.clone(), target.clone());
                // A chain of links (a worktree's to the checkout's, the checkout's to the
                // packages) may pass through hidden directories (/tmp, a home): each hop is
                // mounted where it was.
                for hop in link_hops(&link) {
                    add(target.clone(), hop);
                }
            }
        }
        let writable = dirs;
        Jail {
            bwrap,
            writable,
            net: None,
            new_session: true,
            go_cache: None,
        }
    }

    /// The same sandbox keeping Go's build cache in `project` when it is a Go project
    /// (`sandbox/go_cache.rs`): the home that held it is hidden.
    pub fn keeping_go_builds(mut self, project: &Path) -> Jail {
        self.go_cache = go_cache::for_project(project);
        self
    }

    /// The same sandbox in `net`'s network namespace (a tier's services' loopback).
    pub fn in_net(mut self, net: Option<NetNs>) -> Jail {
        self.net = net;
        self
    }

    /// The same sandbox keeping the caller's session and process group (services).
    pub fn in_callers_session(mut self) -> Jail {
        self.new_session = false;
        self
    }

    /// The network namespace it joins, if any.
    pub fn net(&self) -> Option<&NetNs> {
        self.net.as_ref()
    }

    /// The bwrap this sandbox runs under.
    pub fn bwrap(&self) -> &Path {
        &self.bwrap
    }

    /// `inv` run inside the sandbox: bwrap (behind `nsenter` when it joins a [`NetNs`]) with
    /// `inv` after `--`; the environment and working directory carry over.
    /// A program that does not exist is left unwrapped, so that starting it fails as it
    /// would without a sandbox (huddle's "not found" errors), not inside bwrap.
    pub fn wrap(&self, inv: &Invocation) -> Invocation {
        if !program_exists(&inv.program) {
            return inv.clone();
        }
        let own = args::Own {
            net: self.net.is_none(),
            session: self.new_session,
        };
        let bwrap_args = args::bwrap_args(&self.writable, own, inv);
        let mut out = match &self.net {
            Some(net) => {
                let mut out = net.enter_command();
                out.arg(&self.bwrap);
                out
            }
            None => Invocation::new(&self.bwrap, &inv.cwd),
        };
        out.args.extend(bwrap_args);
        out.env = inv.env.clone();
        if let Some(cache) = &self.go_cache {
            go_cache::apply(cache, &mut out.env);
        }
        out.cwd = inv.cwd.clone();
        out
    }
}

/// The paths a symlink chain from `link` goes through, `link` excluded (at most 8 hops).
fn link_hops(link: &Path) -> Vec<PathBuf> {
    let mut hops = Vec::new();
    let mut cur = link.to_path_buf();
    while hops.len() < 8 {
        let Ok(next) = std::fs::read_link(&cur) else {
            break;
        };
        let next = cur.parent().map_or(next.clone(), |p| p.join(&next));
        if !next.is_symlink() {
            break;
        }
        hops.push(next.clone());
        cur = next;
    }
    hops
}

fn program_exists(program: &Path) -> bool {
    if program.components().count() > 1 {
        program.is_file()
    } else {
        probe::on_path(&program.to_string_lossy()).is_some()
    }
}

tokio::task_local! {
    static JAIL: Jail;
}

/// Runs `run` with every process [`crate::process`] starts in it wrapped by `jail` (`None`:
/// as it is).
pub async fn confined<F: Future>(jail: Option<Jail>, run: F) -> F::Output {
    match jail {
        Some(j) => JAIL.scope(j, run).await,
        None => run.await,
    }
}

/// The sandbox of the current [`confined`] scope, for a task spawned from it: a task-local
/// does not follow `tokio::spawn`, so the task must enter the scope again.
pub(crate) fn current() -> Option<Jail> {
    JAIL.try_with(Jail::clone).ok()
}

/// `inv` as the current [`confined`] scope runs it.
pub(crate) fn wrap_current(inv: &Invocation) -> std::borrow::Cow<'_, Invocation> {
    match JAIL.try_with(|j| j.wrap(inv)) {
        Ok(wrapped) => std::borrow::Cow::Owned(wrapped),
        Err(_) => std::borrow::Cow::Borrowed(inv),
    }
}

/// The sandbox of one run in `project` (canonical) that writes its run directories in
/// `runs_dir` (created when missing), per `opts`; `None` when it runs without.
pub fn for_run(
    project: &Path,
    runs_dir: &Path,
    opts: &crate::RunOptions,
) -> Result<Option<Jail>, RunnerError> {
    let Some(bwrap) = opts.sandbox.resolve()? else {
        return Ok(None);
    };
    std::fs::create_dir_all(runs_dir)
        .map_err(|e| RunnerError::io(format!("creating {}", runs_dir.display()), e))?;
    Ok(Some(
        Jail::new(bwrap, &[project, runs_dir])
            .in_net(opts.sandbox_net.clone())
            .keeping_go_builds(project),
    ))
}
