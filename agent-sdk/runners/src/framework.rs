//! The frameworks huddle can run, and how people name them.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A test framework with an adapter in [`crate::adapters`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Framework {
    /// Python's pytest (`pytest`, `python -m pytest`).
    Pytest,
    /// Jest (`node_modules/.bin/jest`).
    Jest,
    /// Vitest (`node_modules/.bin/vitest run`).
    Vitest,
    /// Mocha (`node_modules/.bin/mocha`).
    Mocha,
    /// Node's built-in test runner (`node --test`).
    #[serde(rename = "node-test")]
    NodeTest,
    /// `go test`.
    Go,
    /// `cargo test`, or `cargo nextest run` when cargo-nextest is installed.
    Cargo,
    /// Cypress (`cypress run --reporter json`).
    Cypress,
    /// Maestro mobile UI flows (`maestro test --format junit`).
    Maestro,
    /// Playwright Test (`@playwright/test`): the e2e tier's runner, never detected as a
    /// project's framework (so not in [`Framework::ALL`]).
    Playwright,
}

impl Framework {
    /// Every framework, in detection order of their project files.
    pub const ALL: [Framework; 9] = [
        Framework::Vitest,
        Framework::Jest,
        Framework::Mocha,
        Framework::NodeTest,
        Framework::Cypress,
        Framework::Maestro,
        Framework::Pytest,
        Framework::Go,
        Framework::Cargo,
    ];

    /// The canonical name, as printed and as accepted by `--framework`.
    pub fn name(self) -> &'static str {
        match self {
            Framework::Pytest => "pytest",
            Framework::Jest => "jest",
            Framework::Vitest => "vitest",
            Framework::Mocha => "mocha",
            Framework::NodeTest => "node-test",
            Framework::Go => "go",
            Framework::Cargo => "cargo",
            Framework::Cypress => "cypress",
            Framework::Maestro => "maestro",
            Framework::Playwright => "playwright",
        }
    }

    /// Whether the framework runs on Node.js (and so lives in `node_modules`).
    pub fn is_node(self) -> bool {
        matches!(
            self,
            Framework::Jest
                | Framework::Vitest
                | Framework::Mocha
                | Framework::NodeTest
                | Framework::Cypress
                | Framework::Playwright
        )
    }
}

impl fmt::Display for Framework {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A framework name nobody knows; the message lists the names that work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFramework(pub String);

impl fmt::Display for UnknownFramework {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown test framework {:?}: expected one of pytest, jest, vitest, mocha, node-test, go, cargo, cypress, maestro, playwright",
            self.0
        )
    }
}

impl std::error::Error for UnknownFramework {}

impl FromStr for Framework {
    type Err = UnknownFramework;

    /// Accepts the canonical names and the usual spellings in task metadata and shared memory
    /// (`"go test"`, `"cargo test"`, `"nextest"`, `"py.test"`, `"node:test"`, any case).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let norm = s.trim().to_ascii_lowercase();
        let fw = match norm.as_str() {
            "pytest" | "py.test" | "python" => Framework::Pytest,
            "jest" => Framework::Jest,
            "vitest" => Framework::Vitest,
            "mocha" => Framework::Mocha,
            "node-test" | "node:test" | "node --test" | "node test" | "nodetest" => {
                Framework::NodeTest
            }
            "go" | "go test" | "gotest" | "go-test" | "golang" => Framework::Go,
            "cargo" | "cargo test" | "cargo-test" | "nextest" | "cargo nextest" | "rust" => {
                Framework::Cargo
            }
            "cypress" | "cypress run" => Framework::Cypress,
            "maestro" | "maestro test" => Framework::Maestro,
            "playwright" | "@playwright/test" => Framework::Playwright,
            _ => return Err(UnknownFramework(s.to_string())),
        };
        Ok(fw)
    }
}
