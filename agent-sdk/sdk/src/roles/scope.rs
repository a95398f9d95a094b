//! Which files the model sees for a fix: the failing tests' files, project files named in the
//! failure output, the source files the tests are named after (`test_cart.py` → `cart.py`), and
//! the files the last fixes changed. Each is marked editable or read-only under the role's
//! policy.

use super::runs::Runs;
use crate::edits::guard::{check_path, resolve};
use crate::edits::{is_test_file, Policy};
use crate::llm::ScopeFile;
use regex::Regex;
use std::path::Path;
use std::sync::OnceLock;

/// Most files shown in one prompt.
const MAX_FILES: usize = 8;

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
    ".pytest_cache",
    "vendor",
];

fn path_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"[A-Za-z0-9_./-]+\.(?:py|js|jsx|ts|tsx|mjs|cjs|mts|cts|go|rs)\b")
            .expect("path pattern")
    })
}

/// The files in scope for fixing `targets`.
pub(crate) fn files_in_scope(runs: &Runs, targets: &[String], policy: &Policy) -> Vec<ScopeFile> {
    let root = runs
        .project
        .canonicalize()
        .unwrap_or_else(|_| runs.project.clone());
    let root_text = format!("{}/", root.display());
    let mut wanted: Vec<String> = Vec::new();
    let mut add = |rel: String| {
        if !wanted.contains(&rel) {
            wanted.push(rel);
        }
    };
    let mut stems = Vec::new();
    for t in targets {
        if let Some(file) = runs.test_file(t) {
            stems.push(subject(&file));
            add(file);
        }
    }
    for t in targets {
        let text = runs.failure_text(t);
        for m in path_pattern().find_iter(&text) {
            let p = m.as_str().strip_prefix(&root_text).unwrap_or(m.as_str());
            let p = p.trim_start_matches("./");
            if !p.starts_with('/') && root.join(p).is_file() {
                add(p.to_string());
            }
        }
    }
    let mut sources = Vec::new();
    find_sources(&root, "", 0, &stems, &mut sources);
    sources.sort();
    sources.into_iter().for_each(&mut add);
    runs.edited.iter().cloned().for_each(&mut add);
    wanted
        .into_iter()
        .filter_map(|rel| {
            let (path, rel) = resolve(&root, &rel).ok()?;
            let contents = std::fs::read_to_string(&path).ok()?;
            let editable = check_path(&rel, policy).is_ok();
            Some(ScopeFile {
                path: rel,
                contents,
                editable,
            })
        })
        .take(MAX_FILES)
        .collect()
}

/// `tests/test_cart.py` → `cart`; `src/cart.test.js` → `cart`; `cart_test.go` → `cart`.
fn subject(file: &str) -> String {
    let name = file.rsplit('/').next().unwrap_or(file);
    let stem = name.split('.').next().unwrap_or(name);
    stem.strip_prefix("test_")
        .or_else(|| stem.strip_suffix("_test"))
        .unwrap_or(stem)
        .to_string()
}

/// The files a fix for `tests` (test files or directories, relative to `project`) may touch:
/// the tests themselves and the non-test code files named after them (`tests/test_cart.py` →
/// `cart.py` wherever it is), in that order, each once — a task's `scope` as
/// `huddle task add --scope-from-tests` derives it.
pub fn scope_of_tests(project: &Path, tests: &[String]) -> Vec<String> {
    let mut scope: Vec<String> = Vec::new();
    let mut stems = Vec::new();
    for t in tests {
        let t = t.trim_start_matches("./").trim_end_matches('/').to_string();
        if project.join(&t).is_file() {
            stems.push(subject(&t));
        }
        if !scope.contains(&t) {
            scope.push(t);
        }
    }
    let mut sources = Vec::new();
    find_sources(project, "", 0, &stems, &mut sources);
    sources.sort();
    for s in sources {
        if !scope.contains(&s) {
            scope.push(s);
        }
    }
    scope
}

/// Non-test code files whose stem is one of `stems`.
fn find_sources(root: &Path, rel: &str, depth: usize, stems: &[String], out: &mut Vec<String>) {
    if depth > 8 || stems.is_empty() {
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
            Ok(t)
                if t.is_dir() && !SKIP_DIRS.contains(&name.as_str()) && !name.starts_with('.') =>
            {
                find_sources(root, &path, depth + 1, stems, out)
            }
            Ok(t) if t.is_file() && !is_test_file(&path) => {
                let stem = name.split('.').next().unwrap_or(&name);
                let code = path_pattern()
                    .find(&name)
                    .is_some_and(|m| m.as_str() == name);
                if code && stems.iter().any(|s| s == stem) {
                    out.push(path);
                }
            }
            _ => {}
        }
    }
}
