//! Where an edit may go and what it may not do. Paths resolve lexically inside the project root
//! and, for the parts that exist, through symlinks too; content rules compare a file before and
//! after all of a reply's edits, so splitting a forbidden change over several edits does not
//! get it through.

use super::test_config;
use super::Refusal;
use regex::Regex;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

/// What a role may change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// Only test files (the executor). Its changed expectations are flagged, not refused.
    pub tests_only: bool,
    /// When set, only paths under one of these prefixes (a task's `scope` metadata).
    pub scope: Option<Vec<String>>,
    /// Test files may change at all: always for the executor, for the tester only when the
    /// task allows it (`allowTestEdits`) — and even then not what a test expects.
    pub test_edits: bool,
    /// Test configuration may change (`allowTestConfigEdits`): it decides which tests run.
    pub test_config_edits: bool,
}

impl Policy {
    /// The tester's policy: the code under test, not its tests or their configuration.
    pub fn tester() -> Policy {
        Policy::default()
    }

    /// The executor's policy: test files only.
    pub fn executor() -> Policy {
        Policy {
            tests_only: true,
            test_edits: true,
            ..Policy::default()
        }
    }
}

const LOCKFILES: &[&str] = &[
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "bun.lock",
    "Cargo.lock",
    "poetry.lock",
    "Pipfile.lock",
    "uv.lock",
    "pdm.lock",
    "go.sum",
    "composer.lock",
    "Gemfile.lock",
];

const CI_FILES: &[&str] = &[
    ".gitlab-ci.yml",
    ".travis.yml",
    "Jenkinsfile",
    "azure-pipelines.yml",
    "bitbucket-pipelines.yml",
    ".drone.yml",
    "appveyor.yml",
];

const CI_DIRS: &[&str] = &[".github", ".circleci", ".ci", ".buildkite", ".gitlab"];

/// Directories no edit may enter.
const DENIED_DIRS: &[&str] = &[".git", "node_modules", ".huddle", ".venv", "venv", "target"];

/// Resolves `rel` inside `root`: the absolute path and the normalised relative path.
pub fn resolve(root: &Path, rel: &str) -> Result<(PathBuf, String), Refusal> {
    let outside = || Refusal::Outside {
        path: rel.to_string(),
    };
    let trimmed = rel.trim();
    if trimmed.is_empty() || trimmed.contains('\0') || trimmed.contains('\\') {
        return Err(outside());
    }
    let mut parts: Vec<String> = Vec::new();
    for c in Path::new(trimmed).components() {
        match c {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop().ok_or_else(outside)?;
            }
            Component::RootDir | Component::Prefix(_) => return Err(outside()),
        }
    }
    if parts.is_empty() {
        return Err(outside());
    }
    let root = root.canonicalize().map_err(|e| Refusal::Io {
        path: root.display().to_string(),
        message: e.to_string(),
    })?;
    let full = parts.iter().fold(root.clone(), |p, c| p.join(c));
    // The deepest part that exists must still be inside the root once symlinks are followed.
    let mut existing = full.as_path();
    while !existing.exists() {
        existing = existing.parent().ok_or_else(outside)?;
    }
    let real = existing.canonicalize().map_err(|_| outside())?;
    if !real.starts_with(&root) {
        return Err(outside());
    }
    Ok((full, parts.join("/")))
}

/// Refuses paths no edit may touch, and paths outside the role's allowlist.
pub fn check_path(rel: &str, policy: &Policy) -> Result<(), Refusal> {
    let forbidden = |why: &str| Refusal::Forbidden {
        path: rel.to_string(),
        why: why.to_string(),
    };
    let parts: Vec<&str> = rel.split('/').collect();
    let name = parts.last().copied().unwrap_or(rel);
    if let Some(d) = parts[..parts.len() - 1]
        .iter()
        .find(|d| DENIED_DIRS.contains(d))
    {
        return Err(forbidden(&format!("files under `{d}/` are off limits")));
    }
    if LOCKFILES.contains(&name) {
        return Err(forbidden(
            "it is a lockfile; dependencies are not changed by a test fix",
        ));
    }
    if CI_FILES.contains(&name) || parts.first().is_some_and(|d| CI_DIRS.contains(d)) {
        return Err(forbidden("it is CI configuration"));
    }
    if !policy.test_config_edits {
        if let Some(why) = test_config::whole_file(rel) {
            return Err(Refusal::TestConfig {
                path: rel.to_string(),
                why: why.to_string(),
            });
        }
    }
    if !policy.test_edits && is_test_file(rel) {
        return Err(Refusal::TestEdit {
            path: rel.to_string(),
        });
    }
    if policy.tests_only && !is_test_file(rel) {
        return Err(Refusal::NotAllowed {
            path: rel.to_string(),
            role: "an executor".into(),
        });
    }
    super::verdict_rules::check_path(rel, policy)?;
    if let Some(scope) = &policy.scope {
        if !scope.iter().any(|p| in_scope(rel, p)) {
            return Err(Refusal::OutOfScope {
                path: rel.to_string(),
                scope: scope.join(", "),
            });
        }
    }
    Ok(())
}

/// Whether `rel` is inside one entry of a task's `scope`: a glob (`src/**/*.py`), or a path
/// that is the file itself or a directory above it (`src/parser` holds `src/parser/a.py`, not
/// `src/parser_old.py`), as the daemon reads it when it keeps overlapping tasks apart.
pub(crate) fn in_scope(rel: &str, entry: &str) -> bool {
    let entry = entry.trim_start_matches("./").trim_end_matches('/');
    if entry.is_empty() || entry == "." {
        return true;
    }
    if entry.contains(['*', '?', '[', '{']) {
        return globset::GlobBuilder::new(entry)
            .literal_separator(true)
            .build()
            .is_ok_and(|g| g.compile_matcher().is_match(rel));
    }
    rel == entry
        || rel
            .strip_prefix(entry)
            .is_some_and(|rest| rest.starts_with('/'))
}

const CODE_EXTENSIONS: &[&str] = &[
    "py", "js", "jsx", "ts", "tsx", "mjs", "cjs", "mts", "cts", "go", "rs",
];

/// Whether `rel` is a test file by the usual conventions: `test_*.py`, `*_test.py`,
/// `conftest.py`, `*.test.*`, `*.spec.*`, `*_test.go`, or code under `tests/`, `test/`,
/// `__tests__/` or `spec/`.
pub fn is_test_file(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    let name = parts.last().copied().unwrap_or(rel);
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    if !CODE_EXTENSIONS.contains(&ext) {
        return false;
    }
    let by_name = match ext {
        "py" => stem.starts_with("test_") || stem.ends_with("_test") || stem == "conftest",
        "go" => stem.ends_with("_test"),
        _ => stem.ends_with(".test") || stem.ends_with(".spec"),
    };
    by_name
        || parts[..parts.len() - 1]
            .iter()
            .any(|d| matches!(*d, "tests" | "test" | "__tests__" | "spec"))
}

fn markers() -> &'static [(Regex, &'static str)] {
    static MARKERS: OnceLock<Vec<(Regex, &'static str)>> = OnceLock::new();
    MARKERS.get_or_init(|| {
        [
            (r"@pytest\.mark\.(skip|skipif|xfail)\b", "@pytest.mark.skip"),
            (r"\bpytest\.(skip|xfail)\s*\(", "pytest.skip()"),
            (r"@unittest\.(skip|expectedFailure)", "@unittest.skip"),
            (r"\bself\.skipTest\s*\(", "self.skipTest()"),
            (
                r"\b(it|test|describe|context|suite)\.(skip|todo)",
                "it.skip",
            ),
            (r"\b(xit|xtest|xdescribe|xcontext)\s*\(", "xit"),
            (r"\bthis\.skip\s*\(", "this.skip()"),
            (r"\b(it|test|describe|context|suite)\.only\b", ".only"),
            (r"\bt\.Skip(f|Now)?\s*\(", "t.Skip"),
            (r"#\[\s*ignore\b", "#[ignore]"),
            (r"@ts-(ignore|nocheck|expect-error)", "@ts-ignore"),
            (r"\bas\s+any\b", "as any"),
        ]
        .into_iter()
        .map(|(p, name)| (Regex::new(p).expect("marker pattern"), name))
        .collect()
    })
}

fn assertions() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"\bassert\w*!?|\bexpect\s*\(|\bt\.(Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\(|\.should\b|\brequire\.\w+\s*\(",
        )
        .expect("assertion pattern")
    })
}

/// Counts the assertions in `text` (`assert…`, `expect(`, `t.Error(`, `.should`…).
pub fn count_assertions(text: &str) -> usize {
    assertions().find_iter(text).count()
}

/// Refuses a change of `rel` from `before` to `after` that adds a skip/ignore/type-escape
/// marker, removes assertions, changes the test sections of a configuration file, or — outside
/// the executor's test-files-only mode — changes what a test expects.
pub fn check_content(rel: &str, before: &str, after: &str, policy: &Policy) -> Result<(), Refusal> {
    if !policy.test_config_edits {
        test_config::check_sections(rel, before, after).map_err(|why| Refusal::TestConfig {
            path: rel.to_string(),
            why,
        })?;
    }
    for (re, name) in markers() {
        if re.find_iter(after).count() > re.find_iter(before).count() {
            return Err(Refusal::Marker {
                path: rel.to_string(),
                marker: (*name).to_string(),
            });
        }
    }
    super::verdict_rules::check_content(rel, before, after, policy)?;
    let (b, a) = (count_assertions(before), count_assertions(after));
    if a < b {
        return Err(Refusal::AssertionsDeleted {
            path: rel.to_string(),
            before: b,
            after: a,
        });
    }
    if !policy.tests_only && is_test_file(rel) {
        if let Some(line) = changed_expectations(before, after).into_iter().next() {
            return Err(Refusal::ExpectationChanged {
                path: rel.to_string(),
                line,
            });
        }
    }
    Ok(())
}

fn expectation_lines() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"\.(to[A-Z]\w*|equals?|eql|deepEqual|strictEqual|deepStrictEqual)\s*\(")
            .expect("expectation pattern")
    })
}

/// Lines of `before` that state an expectation (an assertion, a matcher such as `.toBe(`) and
/// are gone from `after`: a test made to expect something else. Moved or re-indented lines
/// do not count.
pub fn changed_expectations(before: &str, after: &str) -> Vec<String> {
    let expecting = |text: &str| -> Vec<String> {
        text.lines()
            .map(str::trim)
            .filter(|l| assertions().is_match(l) || expectation_lines().is_match(l))
            .map(str::to_string)
            .collect()
    };
    let mut remaining = expecting(after);
    let mut changed = Vec::new();
    for line in expecting(before) {
        match remaining.iter().position(|l| *l == line) {
            Some(i) => {
                remaining.swap_remove(i);
            }
            None => changed.push(line),
        }
    }
    changed
}

#[cfg(test)]
#[path = "guard_tests.rs"]
mod tests;
