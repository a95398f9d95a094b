//! Jest: `jest --json --outputFile=… --testLocationInResults --ci`. The JSON format (shared by
//! vitest's json reporter) is parsed by [`parse_jest_json`].

use super::{exact_names_pattern, node_tool, read_output, relative, split_js_nodeid};
use super::{Collected, Ctx, Prepared};
use crate::coverage;
use crate::error::RunnerError;
use crate::options::{Listing, Selection};
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
    let output: Output = serde_json::from_slice(bytes)?;
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

pub(crate) fn prepare(ctx: &Ctx<'_>) -> Result<Prepared, RunnerError> {
    let (mut inv, _) = node_tool(ctx, "jest")?;
    let report = ctx.out("jest.json");
    inv.arg("--json")
        .arg(format!("--outputFile={}", report.display()))
        .arg("--testLocationInResults")
        .arg("--ci");
    if let Some(f) = &ctx.opts.filter {
        inv.arg(format!("--testNamePattern={f}"))
            .arg("--passWithNoTests");
    }
    match &ctx.opts.selection {
        Selection::All => {}
        Selection::Paths(paths) => {
            inv.arg("--runTestsByPath");
            inv.args.extend(paths.iter().map(Into::into));
        }
        Selection::Related(files) => {
            inv.arg("--passWithNoTests").arg("--findRelatedTests");
            inv.args.extend(files.iter().map(Into::into));
        }
        Selection::Tests(ids) => {
            let (files, names) = files_and_names(ids);
            if !names.is_empty() && ctx.opts.filter.is_none() {
                inv.arg(format!("--testNamePattern={}", exact_names_pattern(&names)));
            }
            inv.arg("--runTestsByPath");
            inv.args.extend(files.into_iter().map(Into::into));
        }
    }
    if ctx.opts.coverage {
        inv.arg("--coverage")
            .arg("--coverageReporters=json-summary")
            .arg(format!(
                "--coverageDirectory={}",
                ctx.out("coverage").display()
            ));
    }
    let mut prepared = Prepared::new(inv);
    prepared.report_file = Some(report);
    Ok(prepared)
}

/// The distinct files of JavaScript node ids, and the full names of the tests in them. A file
/// that failed to load as a whole contributes no name: re-running it shows whether it loads.
pub(crate) fn files_and_names(ids: &[String]) -> (Vec<String>, Vec<String>) {
    let (mut files, mut names) = (Vec::new(), Vec::new());
    for id in ids {
        let (file, name) = split_js_nodeid(id);
        if !files.iter().any(|f| f == file) {
            files.push(file.to_string());
        }
        names.extend(name);
    }
    (files, names)
}

pub(crate) fn collect(ctx: &Ctx<'_>, prepared: &Prepared) -> Result<Collected, RunnerError> {
    let mut collected = Collected::default();
    if let Some(bytes) = prepared.report_file.as_deref().and_then(read_output) {
        collected.tests = parse_jest_json(&bytes, ctx.project)
            .map_err(|e| RunnerError::io("reading jest's JSON report", e.into()))?;
    }
    if ctx.opts.coverage {
        collected.coverage = coverage::istanbul(ctx.run_dir, "coverage/coverage-summary.json");
    }
    Ok(collected)
}

pub(crate) async fn list(ctx: &Ctx<'_>) -> Result<Listing, RunnerError> {
    let (mut inv, _) = node_tool(ctx, "jest")?;
    inv.arg("--listTests").arg("--json");
    let out = ctx.helper(&inv).await?;
    let files: Vec<String> = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let mut listing = Listing {
        tests: files.iter().map(|f| relative(ctx.project, f)).collect(),
        errors: Vec::new(),
    };
    if out.exit_code != 0 {
        listing
            .errors
            .push(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    Ok(listing)
}
