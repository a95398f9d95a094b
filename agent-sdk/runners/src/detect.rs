//! Which framework a project uses, and why. An explicit choice wins (the `--framework` flag,
//! then task metadata `framework`, then shared memory `test_strategy.test_framework`); else
//! the project's files decide, in order: `package.json`, pytest configuration or test files,
//! `go.mod`, `Cargo.toml`.

use crate::error::RunnerError;
use crate::framework::Framework;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;

/// Explicit choices that outrank the project's files, strongest first.
#[derive(Debug, Clone, Copy, Default)]
pub struct Overrides<'a> {
    /// `huddle test --framework NAME`.
    pub flag: Option<&'a str>,
    /// The task's metadata object; its `framework` field is read.
    pub task_metadata: Option<&'a Value>,
    /// The team's shared memory document; `test_strategy.test_framework` is read.
    pub shared_memory: Option<&'a Value>,
}

/// Where a detection came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The `--framework` flag.
    Flag,
    /// Task metadata `framework`.
    TaskMetadata,
    /// Shared memory `test_strategy.test_framework`.
    SharedMemory,
    /// The project's files.
    ProjectFiles,
}

/// The framework to run, with the reasoning behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detection {
    /// The framework chosen.
    pub framework: Framework,
    /// Where the choice came from.
    pub source: Source,
    /// Why, in one sentence.
    pub reason: String,
    /// Every check made, in order, with what it found.
    pub checks: Vec<String>,
}

impl Detection {
    /// A human explanation: the choice, the reason, then each check.
    pub fn explain(&self) -> String {
        let mut out = format!("framework: {}\nreason: {}\n", self.framework, self.reason);
        if !self.checks.is_empty() {
            out.push_str("checked:\n");
            for c in &self.checks {
                let _ = writeln!(out, "  - {c}");
            }
        }
        out
    }
}

/// What detection looks for in a project, for messages when nothing matches.
pub const LOOKED_FOR: &str = "an explicit --framework, task metadata `framework`, shared memory \
`test_strategy.test_framework`, package.json with a vitest/jest/mocha dependency or test \
script (or `node --test`), a vitest/jest/mocha config file or installed package (also through a wrapper such as \
kcd-scripts), pytest.ini, pyproject.toml [tool.pytest…], setup.cfg [tool:pytest], tox.ini [pytest], \
conftest.py, test_*.py or *_test.py, go.mod, Cargo.toml, a cypress dependency or `cypress run` \
test script (when no unit-test runner is found), a `.maestro/` folder of flows";

/// A check of the project's files: the framework it found and why, noting what it saw.
type Finder = fn(&Path, &mut Vec<String>) -> Option<(Framework, String)>;

/// Decides the framework for `project`.
pub fn detect(project: &Path, overrides: &Overrides<'_>) -> Result<Detection, RunnerError> {
    let mut checks = Vec::new();
    let explicit = [
        (
            overrides.flag.map(str::to_string),
            Source::Flag,
            "--framework",
        ),
        (
            overrides
                .task_metadata
                .and_then(|m| m.get("framework"))
                .and_then(Value::as_str)
                .map(str::to_string),
            Source::TaskMetadata,
            "task metadata `framework`",
        ),
        (
            overrides
                .shared_memory
                .and_then(|m| m.pointer("/test_strategy/test_framework"))
                .and_then(Value::as_str)
                .map(str::to_string),
            Source::SharedMemory,
            "shared memory `test_strategy.test_framework`",
        ),
    ];
    for (value, source, what) in explicit {
        match value {
            Some(name) => {
                let framework: Framework = name.parse()?;
                checks.push(format!("{what}: {name:?}"));
                return Ok(Detection {
                    framework,
                    source,
                    reason: format!("{what} says {name:?}"),
                    checks,
                });
            }
            None => checks.push(format!("{what}: not set")),
        }
    }
    if !project.is_dir() {
        return Err(RunnerError::NoProject(project.to_path_buf()));
    }
    let finders: [Finder; 5] = [
        from_package_json,
        from_python,
        from_go,
        from_cargo,
        from_maestro,
    ];
    for find in finders {
        if let Some((framework, reason)) = find(project, &mut checks) {
            return Ok(Detection {
                framework,
                source: Source::ProjectFiles,
                reason,
                checks,
            });
        }
    }
    Err(RunnerError::NotDetected {
        dir: project.to_path_buf(),
        looked_for: LOOKED_FOR.to_string(),
    })
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// `package.json`: the framework the `test` script names wins; else the one dependency; with
/// several and no script, vitest, then jest, then mocha (the newer tool is usually the one
/// being migrated to); with none, the runner's config file or installed package
/// ([`crate::detect_node`]).
fn from_package_json(dir: &Path, checks: &mut Vec<String>) -> Option<(Framework, String)> {
    let Some(text) = read(&dir.join("package.json")) else {
        checks.push("package.json: absent".into());
        return None;
    };
    let Ok(pkg) = serde_json::from_str::<Value>(&text) else {
        checks.push("package.json: present but not valid JSON".into());
        return None;
    };
    let node = [Framework::Vitest, Framework::Jest, Framework::Mocha];
    let has_dep = |name: &str| {
        [
            "dependencies",
            "devDependencies",
            "peerDependencies",
            "optionalDependencies",
        ]
        .iter()
        .any(|k| pkg.get(k).and_then(|d| d.get(name)).is_some())
    };
    let mut deps: Vec<Framework> = node.into_iter().filter(|f| has_dep(f.name())).collect();
    // jest's own configuration key in package.json says jest as much as a dependency does.
    if deps.is_empty() && pkg.get("jest").is_some_and(Value::is_object) {
        deps.push(Framework::Jest);
    }
    let script = pkg
        .pointer("/scripts/test")
        .and_then(Value::as_str)
        .unwrap_or("");
    let named: Vec<Framework> = node
        .into_iter()
        .filter(|f| {
            script
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
                .any(|word| word == f.name())
        })
        .collect();
    let dep_names: Vec<&str> = deps.iter().map(|f| f.name()).collect();
    checks.push(format!(
        "package.json: dependencies {dep_names:?}, test script {script:?}"
    ));
    let words: Vec<&str> = script.split_whitespace().collect();
    if named.is_empty() && words.contains(&"node") && words.contains(&"--test") {
        return Some((
            Framework::NodeTest,
            format!("package.json's test script runs node's built-in test runner ({script:?})"),
        ));
    }
    if let Some(&f) = named.first() {
        return Some((
            f,
            format!("package.json's test script runs {f} ({script:?})"),
        ));
    }
    match deps.as_slice() {
        // A unit-test runner outranks Cypress: its end-to-end suite is the slower, rarer run.
        [] => crate::detect_node::from_config_or_install(dir, checks)
            .or_else(|| from_cypress(script, has_dep("cypress"))),
        [f] => Some((*f, format!("package.json depends on {f}"))),
        [f, ..] => Some((
            *f,
            format!("package.json depends on {dep_names:?} and its test script names none; {f} preferred"),
        )),
    }
}

/// Cypress, when the test script runs it or the project depends on it.
fn from_cypress(script: &str, depends: bool) -> Option<(Framework, String)> {
    // Quotes stripped: `start-server-and-test dev 3000 'cypress run'` runs cypress too.
    let words: Vec<&str> = script
        .split_whitespace()
        .map(|w| w.trim_matches(|c| c == '\'' || c == '"'))
        .collect();
    if words.windows(2).any(|w| w == ["cypress", "run"]) {
        return Some((
            Framework::Cypress,
            format!("package.json's test script runs cypress ({script:?}) and no unit-test runner was found"),
        ));
    }
    depends.then(|| {
        (
            Framework::Cypress,
            "package.json depends on cypress and no unit-test runner was found".to_string(),
        )
    })
}

fn contains(dir: &Path, file: &str, needle: &str) -> bool {
    read(&dir.join(file)).is_some_and(|t| t.contains(needle))
}

fn from_python(dir: &Path, checks: &mut Vec<String>) -> Option<(Framework, String)> {
    let found = if dir.join("pytest.ini").is_file() {
        Some("pytest.ini")
    } else if contains(dir, "pyproject.toml", "[tool.pytest") {
        Some("pyproject.toml has [tool.pytest…]")
    } else if contains(dir, "setup.cfg", "[tool:pytest]") {
        Some("setup.cfg has [tool:pytest]")
    } else if contains(dir, "tox.ini", "[pytest]") {
        Some("tox.ini has [pytest]")
    } else if dir.join("conftest.py").is_file() || dir.join("tests/conftest.py").is_file() {
        Some("conftest.py")
    } else if has_python_tests(dir) {
        Some("test_*.py / *_test.py files")
    } else {
        None
    };
    match found {
        Some(what) => {
            checks.push(format!("pytest: {what}"));
            Some((Framework::Pytest, format!("found {what}")))
        }
        None => {
            checks.push("pytest: no pytest.ini, [tool.pytest…], [tool:pytest], [pytest], conftest.py or test_*.py".into());
            None
        }
    }
}

/// Looks for Python test files in the project root and its `tests/`, `test/` directories.
fn has_python_tests(dir: &Path) -> bool {
    ["", "tests", "test"].iter().any(|sub| {
        std::fs::read_dir(dir.join(sub)).is_ok_and(|entries| {
            entries.flatten().any(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
            })
        })
    })
}

fn from_go(dir: &Path, checks: &mut Vec<String>) -> Option<(Framework, String)> {
    let found = dir.join("go.mod").is_file();
    checks.push(format!(
        "go.mod: {}",
        if found { "present" } else { "absent" }
    ));
    found.then(|| (Framework::Go, "found go.mod".to_string()))
}

fn from_cargo(dir: &Path, checks: &mut Vec<String>) -> Option<(Framework, String)> {
    let found = dir.join("Cargo.toml").is_file();
    checks.push(format!(
        "Cargo.toml: {}",
        if found { "present" } else { "absent" }
    ));
    found.then(|| (Framework::Cargo, "found Cargo.toml".to_string()))
}

/// Maestro's convention: flows (`*.yaml`) in a `.maestro/` folder at the project root.
fn from_maestro(dir: &Path, checks: &mut Vec<String>) -> Option<(Framework, String)> {
    let flows =
        crate::adapters::maestro::flow_files(&dir.join(crate::adapters::maestro::FLOWS_DIR));
    checks.push(format!(".maestro/ flows: {}", flows.len()));
    (!flows.is_empty()).then(|| {
        (
            Framework::Maestro,
            format!("found {} Maestro flow(s) in .maestro/", flows.len()),
        )
    })
}
