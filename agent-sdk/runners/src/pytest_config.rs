//! The pytest settings `--affected` needs (`addopts`, `testpaths`), read from the project's
//! config file the way pytest picks it: the first of pytest.ini, .pytest.ini,
//! pyproject.toml (`[tool.pytest.ini_options]`), tox.ini (`[pytest]`) and setup.cfg
//! (`[tool:pytest]`) that has a pytest section; pytest.ini counts even when empty. Only the
//! project's own directory is looked at, and nothing is run.

use std::path::Path;

/// A project's pytest settings, as words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PytestConfig {
    /// `addopts`, split as pytest splits it (shell words).
    pub addopts: Vec<String>,
    /// `testpaths`: where a bare `pytest` collects; empty means the project root.
    pub testpaths: Vec<String>,
}

impl PytestConfig {
    /// Reads `project`'s pytest configuration; the default when it has none.
    pub fn read(project: &Path) -> PytestConfig {
        for (file, section) in [
            ("pytest.ini", "pytest"),
            (".pytest.ini", "pytest"),
            ("pyproject.toml", ""),
            ("tox.ini", "pytest"),
            ("setup.cfg", "tool:pytest"),
        ] {
            let Ok(text) = std::fs::read_to_string(project.join(file)) else {
                continue;
            };
            let found = if section.is_empty() {
                from_pyproject(&text)
            } else {
                from_ini(&text, section)
            };
            match found {
                Some(config) => return config,
                None if file.ends_with("pytest.ini") => return PytestConfig::default(),
                None => {}
            }
        }
        PytestConfig::default()
    }

    /// Whether pytest collects doctests from modules (`--doctest-modules`).
    pub fn doctest_modules(&self) -> bool {
        self.addopts.iter().any(|w| w == "--doctest-modules")
    }

    /// The names of text files pytest runs as doctests (`--doctest-glob`, default
    /// `test*.txt`).
    pub fn doctest_globs(&self) -> Vec<String> {
        let mut globs = Vec::new();
        let mut words = self.addopts.iter();
        while let Some(w) = words.next() {
            if let Some(g) = w.strip_prefix("--doctest-glob=") {
                globs.push(g.to_string());
            } else if w == "--doctest-glob" {
                globs.extend(words.next().cloned());
            }
        }
        if globs.is_empty() {
            globs.push("test*.txt".into());
        }
        globs
    }
}

/// Splits a value as pytest does (`shlex.split` for addopts, whitespace for testpaths).
fn words(value: &str) -> Vec<String> {
    shlex::split(value).unwrap_or_else(|| value.split_whitespace().map(String::from).collect())
}

/// `key = value` lines of `[section]`, continuation lines (indented) joined; `None` when the
/// file has no such section.
fn from_ini(text: &str, section: &str) -> Option<PytestConfig> {
    let mut inside = false;
    let mut found = false;
    let mut entries: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') && trimmed.ends_with(']') {
            inside = &trimmed[1..trimmed.len() - 1] == section;
            found |= inside;
            continue;
        }
        if !inside || trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            if let Some((_, value)) = entries.last_mut() {
                value.push(' ');
                value.push_str(trimmed);
            }
        } else if let Some((key, value)) = trimmed.split_once(['=', ':']) {
            entries.push((key.trim().to_string(), value.trim().to_string()));
        }
    }
    found.then(|| {
        let get = |k: &str| {
            entries
                .iter()
                .rev()
                .find(|(key, _)| key == k)
                .map(|(_, v)| words(v))
                .unwrap_or_default()
        };
        PytestConfig {
            addopts: get("addopts"),
            testpaths: get("testpaths"),
        }
    })
}

/// `[tool.pytest.ini_options]` of pyproject.toml: a value is a string or a list of strings.
fn from_pyproject(text: &str) -> Option<PytestConfig> {
    let doc: toml::Table = text.parse().ok()?;
    let options = doc.get("tool")?.get("pytest")?.get("ini_options")?;
    let get = |k: &str| match options.get(k) {
        Some(toml::Value::String(s)) => words(s),
        Some(toml::Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect(),
        _ => Vec::new(),
    };
    Some(PytestConfig {
        addopts: get("addopts"),
        testpaths: get("testpaths"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn pytest_ini_with_continuation_lines() {
        let dir = project(&[(
            "pytest.ini",
            "[pytest]\naddopts = --doctest-modules\n    --doctest-glob='*.rst'\ntestpaths = src docs\n",
        )]);
        let c = PytestConfig::read(dir.path());
        assert!(c.doctest_modules());
        assert_eq!(c.doctest_globs(), ["*.rst"]);
        assert_eq!(c.testpaths, ["src", "docs"]);
    }

    #[test]
    fn pyproject_lists_and_the_first_file_with_a_section_wins() {
        let dir = project(&[
            (
                "pyproject.toml",
                "[tool.pytest.ini_options]\naddopts = [\"--doctest-glob\", \"*.md\"]\ntestpaths = [\"tests\"]\n",
            ),
            ("tox.ini", "[pytest]\naddopts = --doctest-modules\n"),
            ("setup.cfg", "[metadata]\nname = x\n"),
        ]);
        let c = PytestConfig::read(dir.path());
        assert!(!c.doctest_modules());
        assert_eq!(c.doctest_globs(), ["*.md"]);
        assert_eq!(c.testpaths, ["tests"]);
    }

    #[test]
    fn setup_cfg_section_and_defaults() {
        let dir = project(&[
            ("pyproject.toml", "[tool.black]\nline-length = 99\n"),
            (
                "setup.cfg",
                "[tool:pytest]\naddopts = -q --doctest-modules\n",
            ),
        ]);
        let c = PytestConfig::read(dir.path());
        assert!(c.doctest_modules());
        assert_eq!(c.doctest_globs(), ["test*.txt"]);
        assert!(c.testpaths.is_empty());
        let none = project(&[("pytest.ini", "")]);
        assert_eq!(PytestConfig::read(none.path()), PytestConfig::default());
    }
}
