//! `--affected`: from the files changed since a git revision, the tests that cover them. The
//! runner's own related-tests mode where it has one (jest `--findRelatedTests`, vitest
//! `related`), naming conventions and the import graph for pytest, naming conventions for
//! mocha, packages and their importers for go, test targets and crates with the workspace
//! crates depending on them for cargo. Changed shared code, configuration, lockfiles, or a file nothing maps to
//! → the full suite, with the reason.

use crate::conventions::TestIndex;
use crate::error::RunnerError;
use crate::framework::Framework;
use crate::guard;
use crate::options::Selection;
use crate::tools;
use std::path::Path;

/// Directory names whose code many tests depend on.
pub const SHARED_DIRS: &[&str] = &["lib", "libs", "utils", "util", "core", "shared", "common"];

/// Configuration and lock files: a change can affect every test.
pub const CONFIG_FILES: &[&str] = &[
    "package.json",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "tsconfig.json",
    "babel.config.js",
    ".babelrc",
    ".mocharc.json",
    ".mocharc.js",
    ".mocharc.yml",
    ".mocharc.yaml",
    "pytest.ini",
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    "tox.ini",
    "conftest.py",
    "poetry.lock",
    "uv.lock",
    "Pipfile",
    "Pipfile.lock",
    "go.mod",
    "go.sum",
    "Cargo.toml",
    "Cargo.lock",
    "build.rs",
    "rust-toolchain.toml",
    "rust-toolchain",
];

/// Config files known by prefix (`jest.config.ts`, `vitest.config.mjs`, `requirements-dev.txt`).
const CONFIG_PREFIXES: &[&str] = &[
    "jest.config.",
    "vitest.config.",
    "vite.config.",
    "vitest.workspace.",
    "tsconfig.",
    "requirements",
];

/// Directories of installed or generated files: nothing in them is the project's code, even
/// when git does not ignore them (an untracked `.venv/` shows up as changed files).
const NOT_SOURCE_DIRS: &[&str] = &[
    "node_modules",
    ".venv",
    "venv",
    "site-packages",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".tox",
    ".nox",
    ".git",
];

/// Files that no test depends on.
const IGNORED_EXTENSIONS: &[&str] = &[
    "md", "markdown", "rst", "adoc", "png", "jpg", "jpeg", "gif", "svg", "ico", "webp",
];

/// What `--affected` decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AffectedPlan {
    /// Nothing that tests depend on changed.
    Nothing {
        /// Why.
        reason: String,
    },
    /// Run the full suite.
    Full {
        /// Why.
        reason: String,
    },
    /// Run only this selection.
    Subset {
        /// The tests to run.
        selection: Selection,
        /// How each changed file was mapped.
        reasons: Vec<String>,
    },
}

/// The changed files and the plan for them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Affected {
    /// Files changed since the base revision (committed, staged, unstaged and untracked),
    /// relative to the project.
    pub changed: Vec<String>,
    /// What to run.
    pub plan: AffectedPlan,
}

async fn git(project: &Path, args: &[&str]) -> Result<Vec<String>, RunnerError> {
    let path = tools::search_path(&[]);
    let git = tools::find_program("git", &path).ok_or_else(|| tools::missing("git", project))?;
    let out = tokio::process::Command::new(git)
        .args(["-c", "core.quotePath=false"])
        .args(args)
        .current_dir(project)
        .output()
        .await
        .map_err(|e| RunnerError::io("running git", e))?;
    if !out.status.success() {
        return Err(RunnerError::Git(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    Ok(out
        .stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect())
}

/// Files changed in `project` since `base` (default `HEAD`), including untracked files.
pub async fn changed_files(project: &Path, base: Option<&str>) -> Result<Vec<String>, RunnerError> {
    let base = guard::check_revision(base.unwrap_or("HEAD"))?;
    let mut files = git(
        project,
        &["diff", "--name-only", "-z", "--relative", base, "--"],
    )
    .await?;
    for f in git(
        project,
        &["ls-files", "--others", "--exclude-standard", "-z"],
    )
    .await?
    {
        if !files.contains(&f) {
            files.push(f);
        }
    }
    files.sort();
    Ok(files)
}

/// Changed files and the plan for `framework` in `project`.
pub async fn affected(
    project: &Path,
    framework: Framework,
    base: Option<&str>,
) -> Result<Affected, RunnerError> {
    let changed = changed_files(project, base).await?;
    let plan = plan(project, framework, &changed);
    Ok(Affected { changed, plan })
}

fn ext(file: &str) -> &str {
    Path::new(file)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
}

/// Whether `file` lies in a virtualenv of the project, by any name: a directory holding
/// `pyvenv.cfg`, as Python itself marks one.
fn in_virtualenv(project: &Path, file: &str) -> bool {
    let mut dir = Path::new(file).parent();
    while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
        if project.join(d).join("pyvenv.cfg").is_file() {
            return true;
        }
        dir = d.parent();
    }
    false
}

/// Whether `file` is installed or generated, not the project's.
fn not_source(project: &Path, file: &str) -> bool {
    file.starts_with(".huddle/")
        || file.split('/').any(|c| NOT_SOURCE_DIRS.contains(&c))
        || in_virtualenv(project, file)
}

/// Whether `file` is prose, pictures or repository metadata, which no test runs.
fn prose(file: &str) -> bool {
    let name = file.rsplit('/').next().unwrap_or(file);
    file.starts_with("docs/")
        || IGNORED_EXTENSIONS.contains(&ext(file))
        || (ext(file) == "txt" && !name.starts_with("requirements"))
        || name.starts_with("LICENSE")
        || matches!(name, ".gitignore" | ".gitattributes" | ".editorconfig")
}

/// Why a changed file forces the full suite, if it does.
fn shared(file: &str) -> Option<String> {
    let name = file.rsplit('/').next().unwrap_or(file);
    if CONFIG_FILES.contains(&name) || CONFIG_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return Some(format!("{file} is configuration or a lockfile"));
    }
    let dirs: Vec<&str> = file.split('/').collect();
    dirs[..dirs.len() - 1]
        .iter()
        .find(|d| SHARED_DIRS.contains(d))
        .map(|d| format!("{file} is shared code ({d}/)"))
}

/// Decides what to run for `changed` files (pure apart from reading the project's tree).
pub fn plan(project: &Path, framework: Framework, changed: &[String]) -> AffectedPlan {
    let index = TestIndex::new(project, framework);
    // A doctest file (`docs/usage.rst` under `--doctest-glob=*.rst`) is a test, not prose.
    let relevant: Vec<&String> = changed
        .iter()
        .filter(|f| !not_source(project, f) && (!prose(f) || index.is_doctest_file(f)))
        .collect();
    if relevant.is_empty() {
        return AffectedPlan::Nothing {
            reason: if changed.is_empty() {
                "no files changed".into()
            } else {
                format!(
                    "only files no test depends on changed: {}",
                    changed.join(", ")
                )
            },
        };
    }
    if let Some(reason) = relevant.iter().find_map(|f| shared(f)) {
        return AffectedPlan::Full { reason };
    }
    let mut picked: Vec<String> = Vec::new();
    let mut reasons = Vec::new();
    for file in relevant {
        match index.tests_for(file) {
            Ok((tests, why)) => {
                reasons.push(why);
                for t in tests {
                    if !picked.contains(&t) {
                        picked.push(t);
                    }
                }
            }
            Err(reason) => return AffectedPlan::Full { reason },
        }
    }
    if picked.is_empty() {
        return AffectedPlan::Nothing {
            reason: "the changed files have no tests to run".into(),
        };
    }
    let selection = match framework {
        Framework::Jest | Framework::Vitest => Selection::Related(picked),
        _ => Selection::Paths(picked),
    };
    AffectedPlan::Subset { selection, reasons }
}
