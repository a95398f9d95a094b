//! Finding the programs runners need, and saying how to install them when they are missing.
//! Lookups honour a `PATH` given in the run's environment, so what is found is what the child
//! process would find.

use crate::error::RunnerError;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The search path: the run's own `PATH` override, else the process's.
pub fn search_path(env: &[(OsString, OsString)]) -> OsString {
    env.iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_default()
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// Finds `name` on `path` (a `PATH`-style list).
pub fn find_program(name: &str, path: &OsString) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

/// Finds a cargo subcommand binary (`cargo-nextest`): on `path`, then in `$CARGO_HOME/bin`.
pub fn find_cargo_subcommand(name: &str, path: &OsString) -> Option<PathBuf> {
    find_program(name, path).or_else(|| {
        let home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
        let candidate = home.join("bin").join(name);
        is_executable(&candidate).then_some(candidate)
    })
}

/// Finds a package's executable in `node_modules/.bin`, in the project or a parent directory
/// (as Node resolves packages in monorepos).
pub fn node_bin(project: &Path, name: &str) -> Option<PathBuf> {
    project
        .ancestors()
        .map(|dir| dir.join("node_modules").join(".bin").join(name))
        .find(|candidate| candidate.exists())
}

/// The error for a missing program, with the install hint for it.
pub fn missing(tool: &str, project: &Path) -> RunnerError {
    let hint = match tool {
        "node" => "Node.js (node, npm, npx) is needed for JavaScript test runners: install it \
                   (e.g. `apt-get install nodejs npm`) and run `npm ci` in the project"
            .to_string(),
        "jest" | "vitest" | "mocha" | "c8" | "nyc" | "@vitest/coverage-v8" => format!(
            "{tool} is not installed in {}/node_modules: run `npm ci` there (or `npm install \
             --save-dev {tool}`)",
            project.display()
        ),
        "python3" => "no Python interpreter found: install Python 3 and pytest (e.g. \
                      `apt-get install python3 python3-pip && pip install pytest`)"
            .to_string(),
        "pytest" => "no Python interpreter here can import pytest: `pip install pytest` (in the \
                     project's virtualenv, if it has one)"
            .to_string(),
        "pytest-json-report" => "the pytest-json-report plugin is not installed: `pip install \
                                 pytest-json-report`, or let huddle use its own reporter (`--plugins auto`)"
            .to_string(),
        "coverage" => "coverage.py is not installed: `pip install coverage`".to_string(),
        "go" => {
            "install Go (e.g. `apt-get install golang-go`, or from https://go.dev/dl/)".to_string()
        }
        "cargo" => "install Rust with rustup (https://rustup.rs)".to_string(),
        "cypress" => format!(
            "cypress is not installed in {}/node_modules: run `npm ci` there (or `npm install \
             --save-dev cypress`)",
            project.display()
        ),
        "maestro" => "install the Maestro CLI (https://maestro.mobile.dev) and put `maestro` on PATH"
            .to_string(),
        "cargo-nextest" => "install cargo-nextest (`cargo install cargo-nextest --locked`), or \
                            let huddle use `cargo test`"
            .to_string(),
        "git" => "install git (e.g. `apt-get install git`)".to_string(),
        other => format!("install {other}"),
    };
    RunnerError::MissingTool {
        tool: match tool {
            "node" => "node/npx".to_string(),
            other => other.to_string(),
        },
        hint,
    }
}
