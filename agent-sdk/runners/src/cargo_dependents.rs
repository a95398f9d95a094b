//! `--affected` for cargo follows the crate graph: a changed file affects its workspace crate
//! and every workspace crate depending on it, directly or through others (dev- and build-
//! dependencies included), as `cargo metadata` reports them. A test in a dependent crate can
//! fail because of the change just as the crate's own tests can; running only the changed
//! crate would hide that. Only path dependencies between workspace members are edges: a
//! registry crate that shares a member's name is another crate.

use serde::Deserialize;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
struct Metadata {
    packages: Vec<Package>,
}

#[derive(Deserialize)]
struct Package {
    name: String,
    manifest_path: PathBuf,
    #[serde(default)]
    dependencies: Vec<Dependency>,
}

#[derive(Deserialize)]
struct Dependency {
    /// The dependency's directory, for a path dependency.
    #[serde(default)]
    path: Option<PathBuf>,
}

/// One workspace crate.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Crate {
    name: String,
    /// Its directory relative to the project (`crates/a`; `""` for a root package).
    dir: String,
    /// The workspace crates it depends on (indexes).
    depends_on: Vec<usize>,
}

/// A crate selected for a change, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selected {
    /// The package name (`ws-b`).
    pub name: String,
    /// Its directory relative to the project (`crates/b`).
    pub dir: String,
    /// The selected crate it depends on, through which the change reaches it; `None` for the
    /// crate the changed file is in.
    pub via: Option<String>,
}

/// The workspace's crates and the path dependencies between them.
#[derive(Debug, Clone, Default)]
pub struct CrateGraph {
    crates: Vec<Crate>,
}

fn rel(root: &Path, p: &Path) -> Option<String> {
    let p = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    p.strip_prefix(root)
        .ok()
        .map(|r| r.to_string_lossy().replace('\\', "/"))
}

impl CrateGraph {
    /// Reads the graph with `cargo metadata --no-deps` on `project`'s manifest; the error says
    /// why not. It runs outside any sandbox, so from `/`: run in the project, rustup would
    /// take the project's `rust-toolchain.toml`, whose `path` may name any program as `cargo`.
    pub fn read(project: &Path) -> Result<Self, String> {
        let out = std::process::Command::new("cargo")
            .args([
                "metadata",
                "--no-deps",
                "--format-version=1",
                "--manifest-path",
            ])
            .arg(project.join("Cargo.toml"))
            .current_dir("/")
            .output()
            .map_err(|e| format!("cannot run `cargo metadata` ({e})"))?;
        if !out.status.success() {
            return Err(format!(
                "`cargo metadata` failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let meta: Metadata = serde_json::from_slice(&out.stdout)
            .map_err(|e| format!("cannot read `cargo metadata` output ({e})"))?;
        let root = project
            .canonicalize()
            .unwrap_or_else(|_| project.to_path_buf());
        Ok(Self::from_packages(&root, meta.packages))
    }

    fn from_packages(root: &Path, packages: Vec<Package>) -> Self {
        let dir_of = |p: &Package| {
            p.manifest_path
                .parent()
                .and_then(|d| rel(root, d))
                .unwrap_or_default()
        };
        let dirs: Vec<String> = packages.iter().map(dir_of).collect();
        let crates = packages
            .iter()
            .zip(&dirs)
            .map(|(p, dir)| {
                let mut depends_on: Vec<usize> = p
                    .dependencies
                    .iter()
                    .filter_map(|d| rel(root, d.path.as_deref()?))
                    .filter_map(|d| dirs.iter().position(|m| *m == d))
                    .collect();
                depends_on.sort_unstable();
                depends_on.dedup();
                Crate {
                    name: p.name.clone(),
                    dir: dir.clone(),
                    depends_on,
                }
            })
            .collect();
        CrateGraph { crates }
    }

    /// The workspace crate `file` (relative to the project) belongs to: the deepest crate
    /// directory holding it.
    fn crate_of(&self, file: &str) -> Option<usize> {
        self.crates
            .iter()
            .enumerate()
            .filter(|(_, c)| {
                c.dir.is_empty()
                    || file
                        .strip_prefix(c.dir.as_str())
                        .is_some_and(|rest| rest.starts_with('/'))
            })
            .max_by_key(|(_, c)| c.dir.len())
            .map(|(i, _)| i)
    }

    /// The crate of `file` (first) and every workspace crate depending on it, transitively,
    /// each with the crate through which the change reaches it; `None` when `file` is in no
    /// workspace crate.
    pub fn affected_by(&self, file: &str) -> Option<Vec<Selected>> {
        let start = self.crate_of(file)?;
        let mut seen: Vec<(usize, Option<usize>)> = vec![(start, None)];
        let mut queue = VecDeque::from([start]);
        while let Some(at) = queue.pop_front() {
            for (i, c) in self.crates.iter().enumerate() {
                if c.depends_on.contains(&at) && !seen.iter().any(|(s, _)| *s == i) {
                    seen.push((i, Some(at)));
                    queue.push_back(i);
                }
            }
        }
        Some(
            seen.into_iter()
                .map(|(i, via)| Selected {
                    name: self.crates[i].name.clone(),
                    dir: self.crates[i].dir.clone(),
                    via: via.map(|v| self.crates[v].name.clone()),
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package(root: &Path, name: &str, dir: &str, deps: &[&str]) -> Package {
        Package {
            name: name.into(),
            manifest_path: root.join(dir).join("Cargo.toml"),
            dependencies: deps
                .iter()
                .map(|d| Dependency {
                    path: Some(root.join(d)),
                })
                .chain(std::iter::once(Dependency { path: None }))
                .collect(),
        }
    }

    #[test]
    fn the_closure_follows_dependents_and_says_through_which_crate() {
        let root = Path::new("/nonexistent/ws");
        let graph = CrateGraph::from_packages(
            root,
            vec![
                package(root, "a", "crates/a", &[]),
                package(root, "b", "crates/b", &["crates/a"]),
                package(root, "c", "crates/c", &["crates/b"]),
                package(root, "d", "crates/d", &["vendor/outside"]),
                package(root, "e", "crates/e", &["crates/a", "crates/c"]),
            ],
        );
        let picked: Vec<(String, Option<String>)> = graph
            .affected_by("crates/a/src/lib.rs")
            .unwrap()
            .into_iter()
            .map(|s| (s.name, s.via))
            .collect();
        assert_eq!(
            picked,
            [
                ("a".into(), None),
                ("b".into(), Some("a".into())),
                ("e".into(), Some("a".into())),
                ("c".into(), Some("b".into())),
            ]
        );
        let top: Vec<String> = graph
            .affected_by("crates/c/src/lib.rs")
            .unwrap()
            .into_iter()
            .map(|s| s.dir)
            .collect();
        assert_eq!(top, ["crates/c", "crates/e"]);
        assert!(graph.affected_by("vendor/outside/src/lib.rs").is_none());
        assert!(graph.affected_by("crates/ab/src/lib.rs").is_none());
    }
}
