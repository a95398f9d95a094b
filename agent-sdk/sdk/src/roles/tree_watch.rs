//! A verdict run may not write the project: each full run's tree is looked at before and after
//! (size and modification time of every file outside the known caches), and a run that added,
//! removed or changed a project file stops the cycle naming the files — whether the suite, a
//! hook or a fix wrote them, the verdict would rest on a tree nobody reviewed.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;

/// Directories a test run may write: caches, coverage and reports, dependencies, huddle's own.
pub(crate) const CACHES: &[&str] = &[
    ".git",
    ".huddle",
    "node_modules",
    ".venv",
    "venv",
    "target",
    "__pycache__",
    ".pytest_cache",
    ".hypothesis",
    ".mypy_cache",
    ".ruff_cache",
    ".tox",
    ".nox",
    "htmlcov",
    "coverage",
    ".nyc_output",
    "test-results",
    "playwright-report",
    "blob-report",
    ".vite",
    ".vitest",
    ".next",
    "dist",
    "build",
    ".cache",
    ".turbo",
    ".parcel-cache",
];

/// Files a test run may write (by name or suffix).
pub(crate) fn is_cache_file(name: &str) -> bool {
    name.starts_with(".coverage")
        || name.ends_with(".pyc")
        || name.ends_with(".pyo")
        || name == ".DS_Store"
        || name.ends_with(".log")
}

/// Each project file outside the caches, with its size and modification time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TreeState(BTreeMap<String, (u64, Option<SystemTime>)>);

impl TreeState {
    /// The project's files as they are now.
    pub fn capture(root: &Path) -> TreeState {
        let mut files = BTreeMap::new();
        walk(root, "", &mut files);
        TreeState(files)
    }

    /// Every file's path, relative to the root, in path order.
    pub fn paths(&self) -> impl Iterator<Item = &String> {
        self.0.keys()
    }

    /// The files added, removed or changed since `self`, in path order.
    pub fn written_since(&self, later: &TreeState) -> Vec<String> {
        let mut out: Vec<String> = later
            .0
            .iter()
            .filter(|(path, state)| self.0.get(*path) != Some(*state))
            .map(|(path, _)| path.clone())
            .collect();
        out.extend(
            self.0
                .keys()
                .filter(|path| !later.0.contains_key(*path))
                .cloned(),
        );
        out.sort();
        out
    }
}

fn walk(dir: &Path, rel: &str, files: &mut BTreeMap<String, (u64, Option<SystemTime>)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        // Not followed: a link's target is outside what the run may be judged on.
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        if meta.is_dir() {
            if !CACHES.contains(&name.as_str()) && !name.ends_with(".egg-info") {
                walk(&entry.path(), &path, files);
            }
        } else if !is_cache_file(&name) {
            files.insert(path, (meta.len(), meta.modified().ok()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_added_or_removed_file_is_named_and_caches_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("pkg/__pycache__")).unwrap();
        std::fs::write(root.join("pkg/calc.py"), "x = 1\n").unwrap();
        std::fs::write(root.join("gone.txt"), "bye\n").unwrap();
        let before = TreeState::capture(root);
        std::fs::write(root.join("pkg/__pycache__/calc.pyc"), "cache").unwrap();
        std::fs::write(root.join(".coverage"), "cov").unwrap();
        assert!(before.written_since(&TreeState::capture(root)).is_empty());
        std::fs::write(root.join("pkg/calc.py"), "x = 22\n").unwrap();
        std::fs::write(root.join("pkg/new.py"), "").unwrap();
        std::fs::remove_file(root.join("gone.txt")).unwrap();
        assert_eq!(
            before.written_since(&TreeState::capture(root)),
            ["gone.txt", "pkg/calc.py", "pkg/new.py"]
        );
    }
}
