//! Naming conventions that tie a source file to its tests, for runners without a
//! related-tests mode: `src/x.js` → `x.test.js`, `x.spec.js`, `__tests__/x.test.js`,
//! `test/x.spec.js`; `pkg/x.py` → `test_x.py`, `x_test.py`, the test files importing it and
//! the doctests of it and its importers ([`crate::doctests`]); go by package and its importers
//! ([`crate::go_importers`]); cargo by
//! integration-test target, or crate and the workspace crates depending on it
//! ([`crate::cargo_dependents`]).

use crate::doctests::Doctests;
use crate::framework::Framework;
use std::path::Path;

const JS_EXTENSIONS: &[&str] = &[
    "js", "jsx", "ts", "tsx", "mjs", "cjs", "mts", "cts", "vue", "svelte",
];

/// Directories never searched for tests.
const SKIP_DIRS: &[&str] = &[
    "node_modules",
    ".git",
    "target",
    ".huddle",
    "__pycache__",
    ".venv",
    "venv",
    "dist",
    "build",
    "coverage",
    "vendor",
    ".pytest_cache",
    ".tox",
];

fn ext(file: &str) -> &str {
    Path::new(file)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
}

fn name(file: &str) -> &str {
    file.rsplit('/').next().unwrap_or(file)
}

/// The subject of a test file (`math.test.js` → `math`, `test_calc.py` → `calc`), or `None`
/// when the file is not a test file for `framework`.
fn subject(file: &str, framework: Framework) -> Option<String> {
    let n = name(file);
    if framework == Framework::Go {
        return n.strip_suffix("_test.go").map(str::to_string);
    }
    if framework == Framework::Pytest {
        let stem = n.strip_suffix(".py")?;
        return stem
            .strip_prefix("test_")
            .or_else(|| stem.strip_suffix("_test"))
            .map(str::to_string);
    }
    if !JS_EXTENSIONS.contains(&ext(file)) {
        return None;
    }
    let stem = &n[..n.len() - ext(file).len() - 1];
    if let Some(s) = stem
        .strip_suffix(".test")
        .or_else(|| stem.strip_suffix(".spec"))
    {
        return Some(s.to_string());
    }
    let in_test_dir = file
        .split('/')
        .rev()
        .skip(1)
        .any(|d| matches!(d, "__tests__" | "test" | "tests"));
    in_test_dir.then(|| stem.to_string())
}

/// The project's test files for `framework` (by name: `*.test.js`, `*.spec.js`, files in
/// `test/`, `tests/`, `__tests__/`; `test_*.py`, `*_test.py`), sorted, relative.
pub fn test_files(project: &Path, framework: Framework) -> Vec<String> {
    let mut tests = Vec::new();
    walk(project, "", 0, &mut |rel| {
        if subject(rel, framework).is_some() {
            tests.push(rel.to_string());
        }
    });
    tests.sort();
    tests
}

/// The test files of a project, found once per `--affected` plan.
pub struct TestIndex<'a> {
    project: &'a Path,
    framework: Framework,
    tests: Vec<String>,
    /// go's import graph, read once on the first changed go file.
    go_graph: std::sync::OnceLock<Result<crate::go_importers::ImportGraph, String>>,
    /// The project's Python import graph, read once on the first changed module.
    py_graph: std::sync::OnceLock<crate::python_imports::ImportGraph>,
    /// The doctests pytest runs (pytest only).
    doctests: Option<Doctests>,
    /// The cargo workspace's crate graph, read once on the first changed Rust file.
    cargo_graph: std::sync::OnceLock<Result<crate::cargo_dependents::CrateGraph, String>>,
}

impl<'a> TestIndex<'a> {
    /// Indexes `project`'s test files when `framework` maps by naming convention.
    pub fn new(project: &'a Path, framework: Framework) -> Self {
        let tests = if matches!(framework, Framework::Mocha | Framework::Pytest) {
            test_files(project, framework)
        } else {
            Vec::new()
        };
        TestIndex {
            project,
            framework,
            tests,
            go_graph: std::sync::OnceLock::new(),
            py_graph: std::sync::OnceLock::new(),
            doctests: (framework == Framework::Pytest).then(|| Doctests::read(project)),
            cargo_graph: std::sync::OnceLock::new(),
        }
    }

    /// Whether `file` is a doctest text file of the suite (`docs/usage.rst` under pytest's
    /// `--doctest-glob=*.rst`): a test, though its extension says documentation.
    pub fn is_doctest_file(&self, file: &str) -> bool {
        self.doctests.as_ref().is_some_and(|d| d.is_text_file(file))
    }

    /// The tests to run for one changed file and how they were found; `Err` with the reason
    /// when nothing maps to it (the caller then runs the full suite).
    pub fn tests_for(&self, file: &str) -> Result<(Vec<String>, String), String> {
        let exists = self.project.join(file).exists();
        match self.framework {
            Framework::Jest | Framework::Vitest if JS_EXTENSIONS.contains(&ext(file)) => {
                let files = if exists {
                    vec![file.to_string()]
                } else {
                    Vec::new()
                };
                let mode = if self.framework == Framework::Jest {
                    "jest --findRelatedTests"
                } else {
                    "vitest related"
                };
                Ok((
                    files,
                    format!("{file}: {mode} (the test files importing it, directly or not)"),
                ))
            }
            Framework::Mocha | Framework::Pytest => self.by_convention(file, exists),
            Framework::Go if ext(file) == "go" => {
                let dir = file
                    .rsplit_once('/')
                    .map_or(".".to_string(), |(d, _)| format!("./{d}"));
                // A test file changes its own package's tests only.
                if file.ends_with("_test.go") {
                    return Ok((vec![dir.clone()], format!("{file}: tests of package {dir}")));
                }
                let graph = self
                    .go_graph
                    .get_or_init(|| crate::go_importers::ImportGraph::read(self.project));
                let graph = graph.as_ref().map_err(|why| {
                    format!("{why}; without the import graph huddle cannot tell which packages {file} affects")
                })?;
                let Some(dirs) = graph.affected_by(&dir) else {
                    return Err(format!("{file} is in no package `go list` knows"));
                };
                let why = if dirs.len() == 1 {
                    format!("{file}: package {dir}")
                } else {
                    format!(
                        "{file}: package {dir} and the packages importing it: {}",
                        dirs[1..].join(", ")
                    )
                };
                Ok((dirs, why))
            }
            Framework::Cargo if ext(file) == "rs" => self.by_crate(file),
            _ => Err(format!("no test maps to {file}")),
        }
    }

    fn by_convention(&self, file: &str, exists: bool) -> Result<(Vec<String>, String), String> {
        if self.is_doctest_file(file) {
            let files = if exists {
                vec![file.to_string()]
            } else {
                Vec::new()
            };
            return Ok((files, format!("{file}: a doctest file")));
        }
        let wanted_ext = if self.framework == Framework::Pytest {
            ext(file) == "py"
        } else {
            JS_EXTENSIONS.contains(&ext(file))
        };
        if !wanted_ext {
            return Err(format!("no test maps to {file}"));
        }
        if subject(file, self.framework).is_some() {
            let files = if exists {
                vec![file.to_string()]
            } else {
                Vec::new()
            };
            return Ok((files, format!("{file}: a test file")));
        }
        let n = name(file);
        let stem = n.split('.').next().unwrap_or(n);
        let mut tests: Vec<String> = self
            .tests
            .iter()
            .filter(|t| subject(t, self.framework).as_deref() == Some(stem))
            .cloned()
            .collect();
        let by_name = tests.len();
        let mut doctests = Vec::new();
        if let Some(doc) = &self.doctests {
            let graph = self.py_graph.get_or_init(|| {
                let mut files = Vec::new();
                walk(self.project, "", 0, &mut |rel| {
                    if rel.ends_with(".py") || doc.is_text_file(rel) {
                        files.push(rel.to_string());
                    }
                });
                files.sort();
                crate::python_imports::ImportGraph::read(self.project, &files)
            });
            let importers = graph.importers_of(file);
            for t in &importers {
                if subject(t, self.framework).is_some() && !tests.contains(t) {
                    tests.push(t.clone());
                }
            }
            // Its own doctests, then those of the modules and text files importing it.
            for f in std::iter::once(file).chain(importers.iter().map(String::as_str)) {
                if doc.runs(self.project, f) && !tests.iter().any(|t| t == f) {
                    doctests.push(f.to_string());
                }
            }
        }
        let by_import = tests.len() - by_name;
        tests.extend(doctests);
        if tests.is_empty() {
            let looked = if self.framework == Framework::Pytest {
                format!("test_{stem}.py, {stem}_test.py, importers, doctests")
            } else {
                format!("{stem}.test.*, {stem}.spec.*, __tests__/{stem}.*, test/{stem}.*")
            };
            return Err(format!("no test found for {file} (looked for {looked})"));
        }
        let groups = [
            (&tests[..by_name], "by name"),
            (&tests[by_name..by_name + by_import], "they import it"),
            (&tests[by_name + by_import..], "doctests"),
        ];
        let used: Vec<_> = groups.iter().filter(|(g, _)| !g.is_empty()).collect();
        let why = if let [(only, label)] = used.as_slice() {
            match *label {
                "by name" => format!("{file} → {}", only.join(", ")),
                _ => format!("{file} → {} ({label})", only.join(", ")),
            }
        } else {
            let parts: Vec<String> = used
                .iter()
                .map(|(g, label)| format!("{} ({label})", g.join(", ")))
                .collect();
            format!("{file} → {}", parts.join(", "))
        };
        Ok((tests, why))
    }

    fn by_crate(&self, file: &str) -> Result<(Vec<String>, String), String> {
        if file.starts_with("tests/") && file.matches('/').count() == 1 {
            return Ok((
                vec![file.to_string()],
                format!("{file}: integration test target"),
            ));
        }
        let graph = self
            .cargo_graph
            .get_or_init(|| crate::cargo_dependents::CrateGraph::read(self.project));
        let graph = graph.as_ref().map_err(|why| {
            format!("{why}; without the crate graph huddle cannot tell which crates {file} affects")
        })?;
        let Some(mut picked) = graph.affected_by(file) else {
            return Err(format!("{file} is in no crate of the workspace"));
        };
        let own = picked[0].clone();
        if own.dir.is_empty() {
            return Err(format!(
                "{file} belongs to the root crate, so all of its tests run"
            ));
        }
        // Integration tests, benches and examples are no crate's dependency.
        let inner = &file[own.dir.len() + 1..];
        if ["tests/", "benches/", "examples/"]
            .iter()
            .any(|d| inner.starts_with(d))
        {
            picked.truncate(1);
        }
        // The root package's directory is `.`, as cargo's adapter takes it.
        let dir = |c: &crate::cargo_dependents::Selected| match c.dir.as_str() {
            "" => ".".to_string(),
            d => d.to_string(),
        };
        let dirs = picked.iter().map(dir).collect();
        let mut why = format!("{file}: crate {} ({})", own.name, own.dir);
        if picked.len() > 1 {
            let dependents: Vec<String> = picked[1..]
                .iter()
                .map(|c| {
                    let via = c.via.as_deref().unwrap_or_default();
                    format!("{} ({}, depends on {via})", c.name, dir(c))
                })
                .collect();
            why.push_str(&format!(
                " and the crates depending on it: {}",
                dependents.join(", ")
            ));
        }
        Ok((dirs, why))
    }
}

fn walk(root: &Path, rel: &str, depth: usize, found: &mut dyn FnMut(&str)) {
    if depth > 12 {
        return;
    }
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
            // A virtualenv by any name (`env311/`) holds installed code, not the project's.
            Ok(t)
                if t.is_dir()
                    && !SKIP_DIRS.contains(&name.as_str())
                    && !e.path().join("pyvenv.cfg").is_file() =>
            {
                walk(root, &path, depth + 1, found)
            }
            Ok(t) if t.is_file() => found(&path),
            _ => {}
        }
    }
}
