//! Services kept up across the pipeline runs of one task: the tester runs the tiers again and
//! again, narrowed to the tests a fix touched, and starting the services for each run would
//! cost their start-up every time. The pool starts them on the first tier that needs them,
//! hands the same running services (same ports, same environment) to every later tier and
//! run, and stops them when the task is done ([`ServicePool::stop`], or when the last clone
//! is dropped). It starts them again when one has exited, or when the code they serve
//! changed: a fix to the implementation must be tested against a service running it, so the
//! pool compares a fingerprint of the project's files other than its tests
//! ([`source_fingerprint`]); a fix to a test file keeps the services up.

use super::project_file::ServiceSpec;
use super::services::{start_all, Running, ServiceStatus};
use crate::error::RunnerError;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// A handle to the services of one task; clones share them.
#[derive(Debug, Clone, Default)]
pub struct ServicePool {
    held: Arc<Mutex<Option<Held>>>,
}

#[derive(Debug)]
struct Held {
    running: Running,
    /// The [`source_fingerprint`] the services started from.
    fingerprint: u64,
    /// The statuses of the start that is still up (with the log of that start).
    statuses: Vec<ServiceStatus>,
}

/// Services for one tier, from the pool.
#[derive(Debug, Clone)]
pub struct Lease {
    /// The variables the tests get (`HUDDLE_SERVICE_URL`, …).
    pub env: Vec<(String, String)>,
    /// One status per service.
    pub statuses: Vec<ServiceStatus>,
    /// Whether they were already up (started by an earlier tier or run).
    pub reused: bool,
    /// The sandbox's network namespace they listen in, which the tests join.
    pub net: Option<crate::sandbox::NetNs>,
}

impl ServicePool {
    /// The pool's services for `specs`: the running ones when all of them are still up and
    /// started from the same `fingerprint`, else a fresh start (logging into `log_dir`).
    /// Services that do not all become healthy are stopped at once and not kept, so the next
    /// tier tries again. `sandbox`: the bwrap they run under, if any.
    #[allow(clippy::too_many_arguments)]
    pub async fn acquire(
        &self,
        project: &Path,
        specs: &BTreeMap<String, ServiceSpec>,
        log_dir: &Path,
        env: &[(String, String)],
        fingerprint: u64,
        grace: Duration,
        sandbox: Option<&Path>,
    ) -> Result<Lease, RunnerError> {
        let mut held = self.held.lock().await;
        if let Some(h) = held.as_mut() {
            if h.fingerprint == fingerprint && h.running.all_alive() {
                return Ok(Lease {
                    env: h.running.env.clone(),
                    statuses: h.statuses.clone(),
                    reused: true,
                    net: h.running.net.clone(),
                });
            }
        }
        if let Some(dead) = held.take() {
            dead.running.stop(grace).await;
        }
        let (running, statuses) = start_all(project, specs, log_dir, env, sandbox).await?;
        let lease = Lease {
            env: running.env.clone(),
            statuses: statuses.clone(),
            reused: false,
            net: running.net.clone(),
        };
        if statuses.iter().all(|s| s.healthy) && statuses.len() == specs.len() {
            *held = Some(Held {
                running,
                fingerprint,
                statuses,
            });
        } else {
            running.stop(grace).await;
        }
        Ok(lease)
    }

    /// Stops the services (SIGTERM to each process group, SIGKILL after `grace`).
    pub async fn stop(&self, grace: Duration) {
        if let Some(h) = self.held.lock().await.take() {
            h.running.stop(grace).await;
        }
    }
}

/// Directories whose files are never the code a service runs: installed, generated or
/// version control.
const NOT_SOURCE: &[&str] = &[
    ".git",
    ".huddle",
    "node_modules",
    "target",
    "__pycache__",
    ".pytest_cache",
    ".hypothesis",
    ".venv",
    "venv",
    "test-results",
    "playwright-report",
    "coverage",
];

/// A hash of the path, size and modification time of every project file but `tests` (the
/// test files, project-relative): it changes when the code a service runs may have.
pub fn source_fingerprint(project: &Path, tests: &[String]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut files = Vec::new();
    collect(project, "", 0, &mut files);
    files.retain(|(rel, _, _)| !tests.contains(rel));
    files.sort();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    files.hash(&mut h);
    h.finish()
}

fn collect(root: &Path, rel: &str, depth: usize, out: &mut Vec<(String, u64, u128)>) {
    let Ok(entries) = std::fs::read_dir(root.join(rel)) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        match e.file_type() {
            Ok(t) if t.is_dir() && depth < 16 && !NOT_SOURCE.contains(&name.as_str()) => {
                collect(root, &path, depth + 1, out)
            }
            Ok(t) if t.is_file() => {
                let meta = e.metadata().ok();
                let len = meta.as_ref().map_or(0, |m| m.len());
                let modified = meta
                    .and_then(|m| m.modified().ok())
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                out.push((path, len, modified));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_follows_the_code_and_ignores_tests_and_generated_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir_all(p.join("app")).unwrap();
        std::fs::create_dir_all(p.join(".huddle/runs")).unwrap();
        std::fs::write(p.join("app/server.py"), "v1").unwrap();
        std::fs::write(p.join("test_app.py"), "t1").unwrap();
        let tests = vec!["test_app.py".to_string()];
        let first = source_fingerprint(p, &tests);
        std::fs::write(p.join("test_app.py"), "t2, longer").unwrap();
        std::fs::write(p.join(".huddle/runs/report.json"), "{}").unwrap();
        assert_eq!(
            source_fingerprint(p, &tests),
            first,
            "tests and runs do not count"
        );
        std::fs::write(p.join("app/server.py"), "v2 is longer").unwrap();
        assert_ne!(
            source_fingerprint(p, &tests),
            first,
            "the service's code changed"
        );
    }
}
