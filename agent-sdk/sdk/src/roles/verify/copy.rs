//! The throw-away copy a verdict is re-run in: the project's files outside its caches, with the
//! dependency directories (`node_modules`, virtualenvs, cargo's `target`) linked rather than
//! copied so that installs are reused, and huddle's own directory, git's and the caches left
//! out. It lives outside the project, so no runner finds the project's files by walking up.

use crate::roles::tree_watch::{is_cache_file, CACHES};
use std::path::Path;

/// Dependency and build-output directories: linked, so the run finds what was installed and
/// built without copying it.
const LINKED: &[&str] = &["node_modules", ".venv", "venv", "target", "dist", "build"];

/// A copy of `project` in a new temporary directory.
pub(crate) fn mirror(project: &Path) -> std::io::Result<tempfile::TempDir> {
    let copy = tempfile::Builder::new()
        .prefix("huddle-verify-")
        .tempdir()?;
    copy_dir(project, copy.path())?;
    Ok(copy)
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let source = entry.path();
        let target = to.join(&name);
        let meta = source.symlink_metadata()?;
        if meta.is_dir() {
            if LINKED.contains(&name.as_str()) || name.ends_with(".egg-info") {
                link(&source, &target)?;
            } else if !CACHES.contains(&name.as_str()) {
                std::fs::create_dir(&target)?;
                copy_dir(&source, &target)?;
            }
        } else if meta.file_type().is_symlink() {
            // Kept a link: its target is whatever it was in the project.
            link(&std::fs::read_link(&source)?, &target)?;
        } else if meta.is_file() && !is_cache_file(&name) {
            std::fs::copy(&source, &target)?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn link(original: &Path, at: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(original, at)
}

#[cfg(not(unix))]
fn link(_original: &Path, _at: &Path) -> std::io::Result<()> {
    Err(std::io::Error::other(
        "a clean copy needs symbolic links (Unix only)",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_is_copied_dependencies_linked_and_caches_left_out() {
        let project = tempfile::tempdir().unwrap();
        let root = project.path();
        for dir in [
            "src",
            "node_modules/left-pad",
            ".git",
            ".huddle/runs",
            "__pycache__",
        ] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        std::fs::write(root.join("src/calc.py"), "x = 1\n").unwrap();
        std::fs::write(root.join("node_modules/left-pad/index.js"), "").unwrap();
        std::fs::write(root.join(".git/HEAD"), "ref").unwrap();
        std::fs::write(root.join("__pycache__/calc.pyc"), "").unwrap();
        let copy = mirror(root).unwrap();
        let c = copy.path();
        assert_eq!(
            std::fs::read_to_string(c.join("src/calc.py")).unwrap(),
            "x = 1\n"
        );
        assert!(c
            .join("node_modules")
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(c.join("node_modules/left-pad/index.js").is_file());
        assert!(!c.join(".git").exists());
        assert!(!c.join(".huddle").exists());
        assert!(!c.join("__pycache__").exists());
        // The copy is its own: writing it leaves the project alone.
        std::fs::write(c.join("src/calc.py"), "x = 2\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(root.join("src/calc.py")).unwrap(),
            "x = 1\n"
        );
    }
}
