//! Jest's `--json` report (vitest's json reporter writes the same format): suites, their
//! assertions and locations, turned into huddle's test results.

use super::relative;
use crate::report::{Outcome, TestResult};
use crate::scrub::strip_ansi;
use serde::Deserialize;
use std::path::Path;

#[derive(Deserialize)]
struct Output {
    #[serde(rename = "testResults", default)]
    suites: Vec<Suite>,
}

#[derive(Deserialize)]
struct Suite {
    name: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    message: String,
    #[serde(rename = "assertionResults", default)]
    assertions: Vec<Assertion>,
}

#[derive(Deserialize)]
struct Assertion {
    #[serde(rename = "ancestorTitles", default)]
    ancestors: Vec<String>,
    title: String,
    status: String,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(rename = "failureMessages", default)]
    failure_messages: Vec<String>,
    #[serde(default)]
    location: Option<Location>,
}

#[derive(Deserialize)]
struct Location {
    line: u32,
}

fn outcome(status: &str) -> Outcome {
    match status {
        "passed" => Outcome::Passed,
        "failed" => Outcome::Failed,
        // pending, skipped, todo, disabled
        _ => Outcome::Skipped,
    }
}

/// Parses jest's `--json` output (also vitest's json reporter). Node ids are
/// `file::describe::…::title` with `file` relative to `root`; a suite that failed to load
/// (or failed outside its tests) becomes an error entry named by its file.
pub fn parse_jest_json(bytes: &[u8], root: &Path) -> Result<Vec<TestResult>, serde_json::Error> {
    let output: Output = serde_json::from_str(&crate::text::json(bytes))?;
    let mut tests = Vec::new();
    for suite in output.suites {
        let file = relative(root, &suite.name);
        let any_failed = suite.assertions.iter().any(|a| a.status == "failed");
        for a in suite.assertions {
            let mut nodeid = String::with_capacity(file.len() + a.title.len() + 16);
            nodeid.push_str(&file);
            for part in a.ancestors.iter().chain(std::iter::once(&a.title)) {
                nodeid.push_str("::");
                nodeid.push_str(part);
            }
            let outcome = outcome(&a.status);
            let longrepr = (outcome == Outcome::Failed)
                .then(|| strip_ansi(&a.failure_messages.join("\n")).into_owned());
            tests.push(TestResult {
                nodeid,
                outcome,
                duration: a.duration.unwrap_or(0.0) / 1000.0,
                file: Some(file.clone()),
                lineno: a.location.map(|l| l.line),
                longrepr,
            });
        }
        if suite.status == "failed" && !any_failed {
            let mut t = TestResult::new(file.clone(), Outcome::Error);
            t.file = Some(file);
            t.longrepr = Some(strip_ansi(suite.message.trim()).into_owned());
            tests.push(t);
        }
    }
    Ok(tests)
}
