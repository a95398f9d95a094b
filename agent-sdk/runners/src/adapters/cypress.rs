//! Cypress (`cypress run --reporter json`), as the seeds' `run_tests` runs it. Cypress runs
//! one spec file at a time and its json reporter (mocha's) prints one document per spec on
//! stdout, after the `Running:  <spec>  (i of n)` line that names the spec: the documents'
//! own `file` is null, so that line is the only place the file comes from. A filter becomes
//! `--spec '**/*<filter>*'`; `--failed` re-runs the failed tests' spec files (Cypress has no
//! test-name filter of its own). A test that passed on one of Cypress's own `retries` is
//! counted as passed and listed as flaky.

use super::{relative, unreadable_report, Collected, Ctx, Prepared};
use crate::adapters::mocha_json::parse_mocha_json;
use crate::error::RunnerError;
use crate::options::{Listing, Selection};
use crate::process::Captured;
use crate::report::TestResult;
use crate::tools;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The start of a mocha json document, at the start of a line.
const DOC_START: &[u8] = b"{\n  \"stats\": {";

pub(crate) fn prepare(ctx: &Ctx<'_>) -> Result<Prepared, RunnerError> {
    if ctx.opts.coverage {
        return Err(RunnerError::Unsupported(
            "coverage is not supported for Cypress tests".into(),
        ));
    }
    let (mut inv, _) =
        super::node_tool(ctx, "cypress").map_err(|_| tools::missing("cypress", ctx.project))?;
    inv.arg("run").arg("--reporter").arg("json");
    if let Some(spec) = spec_arg(ctx)? {
        inv.arg("--spec").arg(spec);
    }
    Ok(Prepared::new(inv))
}

/// `--spec`'s value: the selected spec files (comma-separated, as Cypress takes several), or
/// the filter as `**/*<filter>*`.
fn spec_arg(ctx: &Ctx<'_>) -> Result<Option<String>, RunnerError> {
    let files: Vec<String> = match &ctx.opts.selection {
        Selection::All => Vec::new(),
        Selection::Paths(p) => p.clone(),
        Selection::Tests(ids) => super::files_and_names_of(ids).0,
        Selection::Related(_) => {
            return Err(RunnerError::Unsupported(
                "Cypress cannot select specs by the source files they cover".into(),
            ))
        }
    };
    let filter = ctx.opts.filter.as_deref();
    if files.is_empty() {
        return Ok(filter.map(|f| format!("**/*{f}*")));
    }
    // Both: the selected specs whose path holds the filter.
    let kept: Vec<String> = files
        .into_iter()
        .filter(|f| filter.is_none_or(|needle| f.contains(needle)))
        .collect();
    if kept.is_empty() {
        return Err(RunnerError::Unsupported(format!(
            "no selected Cypress spec has {:?} in its path",
            filter.unwrap_or_default()
        )));
    }
    Ok(Some(kept.join(",")))
}

pub(crate) fn collect(ctx: &Ctx<'_>, captured: &Captured) -> Result<Collected, RunnerError> {
    let (tests, flaky) = parse_cypress_stdout(&captured.stdout, ctx.project);
    if tests.is_empty() && !captured.timed_out && captured.exit_code != 0 {
        // Nothing ran (no spec matched, the app did not start): say what Cypress printed.
        let mut collected = Collected::default();
        if !String::from_utf8_lossy(&captured.stdout).contains("\"stats\"") {
            return Ok(collected);
        }
        collected.tests = vec![unreadable_report(
            "cypress",
            &ctx.out("stdout.txt"),
            "its json reporter's documents do not parse",
            captured,
        )];
        return Ok(collected);
    }
    Ok(Collected {
        tests,
        flaky,
        ..Collected::default()
    })
}

pub(crate) fn list(_ctx: &Ctx<'_>) -> Result<Listing, RunnerError> {
    Err(RunnerError::Unsupported(
        "Cypress cannot list its tests without running them".into(),
    ))
}

/// The part of a test huddle reads beyond what mocha's parser does: its retry count.
#[derive(Deserialize)]
struct Retried {
    #[serde(rename = "fullTitle")]
    full_title: String,
    #[serde(default, rename = "currentRetry")]
    current_retry: u32,
}

#[derive(Deserialize)]
struct Passes {
    #[serde(default)]
    passes: Vec<Retried>,
}

/// Reads every spec's json document in Cypress's stdout into results with
/// `spec file::describe titles::title` ids, and the ids of tests that passed on a retry.
/// A document before any `Running:` line has no file.
pub fn parse_cypress_stdout(stdout: &[u8], project: &Path) -> (Vec<TestResult>, Vec<String>) {
    let (mut tests, mut flaky) = (Vec::new(), Vec::new());
    let mut spec: Option<String> = None;
    let mut at = 0;
    while at < stdout.len() {
        let line_end = stdout[at..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(stdout.len(), |p| at + p + 1);
        if stdout[at..].starts_with(DOC_START) {
            let doc = &stdout[at..];
            let mut values =
                serde_json::Deserializer::from_slice(doc).into_iter::<serde::de::IgnoredAny>();
            if let Some(Ok(_)) = values.next() {
                let doc = &doc[..values.byte_offset()];
                let file = spec.clone().unwrap_or_default();
                read_doc(doc, &file, project, &mut tests, &mut flaky);
                at += doc.len();
                continue;
            }
        }
        let line = String::from_utf8_lossy(&stdout[at..line_end]);
        if let Some(shown) = running_spec(&line) {
            spec = Some(resolve_spec(project, &shown));
        }
        at = line_end;
    }
    (tests, flaky)
}

fn read_doc(
    doc: &[u8],
    file: &str,
    project: &Path,
    tests: &mut Vec<TestResult>,
    flaky: &mut Vec<String>,
) {
    let Ok(results) = parse_mocha_json(doc, project) else {
        return;
    };
    let retried: Vec<String> = serde_json::from_slice::<Passes>(doc)
        .map(|p| p.passes)
        .unwrap_or_default()
        .into_iter()
        .filter(|t| t.current_retry > 0)
        .map(|t| t.full_title)
        .collect();
    for mut t in results {
        // mocha's parser names a test without a file `::describe::title`.
        t.nodeid = format!("{file}{}", t.nodeid);
        if !file.is_empty() {
            t.file = Some(file.to_string());
        }
        let full_title = t
            .nodeid
            .split_once("::")
            .map_or(String::new(), |(_, rest)| rest.replace("::", " "));
        if t.outcome == crate::report::Outcome::Passed && retried.contains(&full_title) {
            flaky.push(t.nodeid.clone());
        }
        tests.push(t);
    }
}

/// The spec a `Running:  login.cy.js   (1 of 3)` line names.
fn running_spec(line: &str) -> Option<String> {
    let rest = line.trim().strip_prefix("Running:")?.trim();
    let rest = match rest.rsplit_once('(') {
        Some((spec, count)) if count.contains(" of ") => spec.trim_end(),
        _ => rest,
    };
    (!rest.is_empty()).then(|| rest.to_string())
}

/// The project-relative path of a spec Cypress names relative to its specs' common folder:
/// the spec file under the project whose path ends with it (the shortest, if several).
fn resolve_spec(project: &Path, shown: &str) -> String {
    if project.join(shown).is_file() {
        return shown.to_string();
    }
    let mut found = Vec::new();
    find_suffix(project, &format!("/{shown}"), 0, &mut found);
    found
        .into_iter()
        .map(|p| relative(project, &p.to_string_lossy()))
        .min_by_key(String::len)
        .unwrap_or_else(|| shown.to_string())
}

fn find_suffix(dir: &Path, suffix: &str, depth: usize, found: &mut Vec<PathBuf>) {
    const SKIPPED: &[&str] = &["node_modules", ".git", ".huddle", "target"];
    if depth > 8 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        if SKIPPED.iter().any(|s| name == *s) {
            continue;
        }
        let path = e.path();
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            find_suffix(&path, suffix, depth + 1, found);
        } else if path.to_string_lossy().ends_with(suffix) {
            found.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Outcome;

    #[test]
    fn each_document_takes_the_spec_of_the_running_line_before_it() {
        let out = b"  Running:  a.cy.js     (1 of 2)\n{\n  \"stats\": {\"tests\": 1},\n  \"tests\": [{\"title\": \"t\", \"fullTitle\": \"A t\", \"file\": null, \"err\": {}}],\n  \"passes\": [{\"title\": \"t\", \"fullTitle\": \"A t\", \"file\": null, \"currentRetry\": 1, \"err\": {}}],\n  \"failures\": [], \"pending\": []\n}\n  Running:  b.cy.js     (2 of 2)\n{\n  \"stats\": {\"tests\": 1},\n  \"tests\": [{\"title\": \"u\", \"fullTitle\": \"B u\", \"file\": null, \"err\": {}}],\n  \"failures\": [{\"title\": \"u\", \"fullTitle\": \"B u\", \"file\": null, \"err\": {\"message\": \"boom\"}}],\n  \"passes\": [], \"pending\": []\n}\n";
        let (tests, flaky) = parse_cypress_stdout(out, Path::new("/nowhere"));
        let got: Vec<(&str, Outcome)> = tests
            .iter()
            .map(|t| (t.nodeid.as_str(), t.outcome))
            .collect();
        assert_eq!(
            got,
            [
                ("a.cy.js::A::t", Outcome::Passed),
                ("b.cy.js::B::u", Outcome::Failed)
            ]
        );
        assert_eq!(flaky, ["a.cy.js::A::t"]);
        assert_eq!(tests[1].longrepr.as_deref(), Some("boom"));
    }

    #[test]
    fn a_running_line_without_a_count_still_names_its_spec() {
        assert_eq!(
            running_spec("  Running:  x y.cy.js  "),
            Some("x y.cy.js".into())
        );
        assert_eq!(running_spec("Running: "), None);
        assert_eq!(running_spec("not running"), None);
    }
}
