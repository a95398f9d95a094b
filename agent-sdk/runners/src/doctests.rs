//! The doctests pytest runs, for `--affected`: with `--doctest-modules`, each module under the
//! test paths that holds an example (`>>>`); and each text file under them whose name matches
//! `--doctest-glob` (default `test*.txt`) and holds one. A changed module selects its own
//! doctests, and the doctests of the modules and text files importing it.

use crate::pytest_config::PytestConfig;
use globset::{Glob, GlobSet, GlobSetBuilder};
use std::path::Path;

/// Which files of a project pytest runs as doctests.
pub struct Doctests {
    modules: bool,
    /// `testpaths`, each without a trailing `/`; empty: the whole project.
    roots: Vec<String>,
    globs: GlobSet,
}

impl Doctests {
    /// Reads the project's pytest configuration.
    pub fn read(project: &Path) -> Doctests {
        let config = PytestConfig::read(project);
        let mut globs = GlobSetBuilder::new();
        for g in config.doctest_globs() {
            // An invalid pattern matches nothing, as in pytest's fnmatch.
            if let Ok(glob) = Glob::new(&g) {
                globs.add(glob);
            }
        }
        Doctests {
            modules: config.doctest_modules(),
            roots: config
                .testpaths
                .iter()
                .map(|r| r.trim_start_matches("./").trim_end_matches('/').to_string())
                .filter(|r| !r.is_empty() && r != ".")
                .collect(),
            globs: globs.build().unwrap_or_else(|_| GlobSet::empty()),
        }
    }

    fn under_roots(&self, file: &str) -> bool {
        self.roots.is_empty()
            || self
                .roots
                .iter()
                .any(|r| file == r || file.starts_with(&format!("{r}/")))
    }

    /// Whether `file` (relative) is one of the suite's doctest text files by its name and
    /// place: pytest matches a pattern without `/` against the file's name.
    pub fn is_text_file(&self, file: &str) -> bool {
        let name = file.rsplit('/').next().unwrap_or(file);
        !file.ends_with(".py")
            && self.under_roots(file)
            && (self.globs.is_match(name) || self.globs.is_match(file))
    }

    /// Whether pytest runs doctests from `file` (relative to `project`).
    pub fn runs(&self, project: &Path, file: &str) -> bool {
        let collected = if file.ends_with(".py") {
            self.modules && self.under_roots(file)
        } else {
            self.is_text_file(file)
        };
        collected && std::fs::read_to_string(project.join(file)).is_ok_and(|t| t.contains(">>>"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn modules_and_text_files_under_the_test_paths() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            "pytest.ini",
            "[pytest]\naddopts = --doctest-modules --doctest-glob=*.rst\ntestpaths = pkg docs\n",
        );
        write(
            root,
            "pkg/a.py",
            "def f():\n    \"\"\"\n    >>> 1\n    1\n    \"\"\"\n",
        );
        write(root, "pkg/b.py", "def g():\n    return 1\n");
        write(root, "docs/use.rst", ">>> 1\n1\n");
        write(root, "README.rst", ">>> 1\n1\n");
        write(root, "docs/notes.txt", ">>> 1\n1\n");
        let d = Doctests::read(root);
        assert!(d.runs(root, "pkg/a.py"));
        assert!(!d.runs(root, "pkg/b.py"), "no example");
        assert!(d.runs(root, "docs/use.rst"));
        assert!(!d.runs(root, "README.rst"), "outside testpaths");
        assert!(!d.runs(root, "docs/notes.txt"), "not matching the glob");
    }

    #[test]
    fn without_doctest_modules_only_text_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "pytest.ini", "[pytest]\n");
        write(root, "pkg/a.py", ">>> 1\n");
        write(root, "test_usage.txt", ">>> 1\n1\n");
        let d = Doctests::read(root);
        assert!(!d.runs(root, "pkg/a.py"));
        assert!(d.runs(root, "test_usage.txt"), "pytest's default glob");
    }
}
