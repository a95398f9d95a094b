//! Reading pytest's two machine-readable outputs into report entries.

use crate::junit::{parse_junit, JunitError};
use crate::report::{Outcome, TestResult};
use serde::Deserialize;
use std::path::Path;

/// Parses pytest's JUnit XML (xunit1: with `file` and `line`). Node ids are rebuilt as pytest
/// prints them: `file::Class::Nested::name[params]`; a collection error (empty classname) is
/// an error entry named by its file.
pub fn parse_pytest_junit(xml: &str, root: &Path) -> Result<Vec<TestResult>, JunitError> {
    let cases = parse_junit(xml)?;
    let mut tests = Vec::with_capacity(cases.len());
    for c in cases {
        let file = c
            .file
            .clone()
            .or_else(|| file_from_classname(root, &c.classname));
        let nodeid = match (&file, c.classname.is_empty()) {
            (Some(f), true) => f.clone(),
            (None, true) => c.name.replace('.', "/") + ".py",
            (Some(f), false) => {
                let module = f.trim_end_matches(".py").replace('/', ".");
                let classes = c
                    .classname
                    .strip_prefix(module.as_str())
                    .unwrap_or("")
                    .trim_start_matches('.');
                let mut id = f.clone();
                for class in classes.split('.').filter(|s| !s.is_empty()) {
                    id.push_str("::");
                    id.push_str(class);
                }
                id + "::" + &c.name
            }
            (None, false) => format!("{}::{}", c.classname.replace('.', "::"), c.name),
        };
        let longrepr = c.outcome.is_failure().then(|| {
            if c.text.trim().is_empty() {
                c.message.clone().unwrap_or_default()
            } else {
                c.text.clone()
            }
        });
        tests.push(TestResult {
            nodeid,
            outcome: c.outcome,
            duration: c.time,
            // xunit1 lines are 0-based; the report's are 1-based.
            lineno: c.line.map(|l| l + 1),
            file,
            longrepr,
        });
    }
    Ok(tests)
}

/// For xunit2 files (no `file` attribute): the longest dotted prefix of the classname that
/// names a `.py` file under `root`.
fn file_from_classname(root: &Path, classname: &str) -> Option<String> {
    let parts: Vec<&str> = classname.split('.').collect();
    (1..=parts.len()).rev().find_map(|n| {
        let candidate = parts[..n].join("/") + ".py";
        root.join(&candidate).is_file().then_some(candidate)
    })
}

#[derive(Deserialize)]
struct JsonReport {
    #[serde(default)]
    tests: Vec<JsonTest>,
    #[serde(default)]
    collectors: Vec<JsonCollector>,
}

#[derive(Deserialize)]
struct JsonTest {
    nodeid: String,
    outcome: String,
    #[serde(default)]
    lineno: Option<u32>,
    #[serde(default)]
    setup: Option<Stage>,
    #[serde(default)]
    call: Option<Stage>,
    #[serde(default)]
    teardown: Option<Stage>,
}

#[derive(Deserialize)]
struct Stage {
    #[serde(default)]
    duration: f64,
    #[serde(default)]
    outcome: String,
    #[serde(default)]
    longrepr: Option<String>,
}

#[derive(Deserialize)]
struct JsonCollector {
    nodeid: String,
    outcome: String,
    #[serde(default)]
    longrepr: Option<String>,
}

/// Parses a pytest-json-report file. `xfailed` counts as skipped and `xpassed` as passed;
/// failed collectors are error entries.
pub fn parse_json_report(bytes: &[u8]) -> Result<Vec<TestResult>, serde_json::Error> {
    let report: JsonReport = serde_json::from_str(&crate::text::json(bytes))?;
    let mut tests = Vec::with_capacity(report.tests.len());
    for c in report.collectors.iter().filter(|c| c.outcome == "failed") {
        let mut t = TestResult::new(c.nodeid.clone(), Outcome::Error);
        t.file = Some(c.nodeid.split("::").next().unwrap_or(&c.nodeid).to_string());
        t.longrepr = c.longrepr.clone();
        tests.push(t);
    }
    for j in report.tests {
        let outcome = match j.outcome.as_str() {
            "passed" | "xpassed" => Outcome::Passed,
            "failed" => Outcome::Failed,
            "error" => Outcome::Error,
            _ => Outcome::Skipped,
        };
        let stages = [&j.setup, &j.call, &j.teardown];
        let duration = stages
            .iter()
            .filter_map(|s| s.as_ref())
            .map(|s| s.duration)
            .sum();
        let longrepr = outcome.is_failure().then(|| {
            stages
                .iter()
                .filter_map(|s| s.as_ref())
                .filter(|s| s.outcome == "failed")
                .filter_map(|s| s.longrepr.clone())
                .collect::<Vec<_>>()
                .join("\n")
        });
        tests.push(TestResult {
            file: Some(j.nodeid.split("::").next().unwrap_or(&j.nodeid).to_string()),
            nodeid: j.nodeid,
            outcome,
            duration,
            lineno: j.lineno.map(|l| l + 1),
            longrepr,
        });
    }
    Ok(tests)
}

/// nodeid, outcome, duration, 0-based line, failure text.
type HuddleRow = (String, String, f64, Option<u32>, Option<String>);

/// huddle's own reporter file (`huddle_pytest_report.py`): compact rows, one per test, and
/// one per failed collector.
#[derive(Deserialize)]
struct HuddleReport {
    tests: Vec<HuddleRow>,
    #[serde(default)]
    errors: Vec<(String, Option<String>)>,
}

/// Parses the file huddle's pytest reporter writes. Its outcomes are already the report's
/// (xfailed → skipped, xpassed → passed, a failing setup or teardown → error); failed
/// collectors are error entries named by their node id (a file), as pytest prints them.
pub fn parse_huddle_pytest(bytes: &[u8]) -> Result<Vec<TestResult>, serde_json::Error> {
    let report: HuddleReport = serde_json::from_str(&crate::text::json(bytes))?;
    let mut tests = Vec::with_capacity(report.tests.len() + report.errors.len());
    for (nodeid, longrepr) in report.errors {
        let mut t = TestResult::new(nodeid.clone(), Outcome::Error);
        t.file = Some(nodeid.split("::").next().unwrap_or(&nodeid).to_string());
        t.longrepr = longrepr;
        tests.push(t);
    }
    for (nodeid, outcome, duration, lineno, longrepr) in report.tests {
        let outcome = match outcome.as_str() {
            "passed" => Outcome::Passed,
            "failed" => Outcome::Failed,
            "error" => Outcome::Error,
            _ => Outcome::Skipped,
        };
        tests.push(TestResult {
            file: Some(nodeid.split("::").next().unwrap_or(&nodeid).to_string()),
            nodeid,
            outcome,
            duration,
            lineno: lineno.map(|l| l + 1),
            longrepr: if outcome.is_failure() {
                Some(longrepr.unwrap_or_default())
            } else {
                None
            },
        });
    }
    Ok(tests)
}

/// What a pytest run stopped at its timeout had done, from the progress lines of huddle's
/// reporter (`HUDDLE_PYTEST_PROGRESS`): the tests that finished and collectors that failed,
/// and the ids of tests that started and did not finish.
pub(crate) fn read_huddle_progress(bytes: &[u8]) -> (Vec<TestResult>, Vec<String>) {
    let text = crate::text::json(bytes);
    let (mut rows, mut errors, mut started) = (Vec::new(), Vec::new(), Vec::new());
    for line in text.lines() {
        let Ok(serde_json::Value::Array(item)) = serde_json::from_str(line) else {
            continue;
        };
        match item.first().and_then(serde_json::Value::as_str) {
            Some("start") => started.extend(item.get(1).and_then(|v| v.as_str()).map(String::from)),
            Some("test") => rows.extend(item.get(1).cloned()),
            Some("error") => errors.push(serde_json::Value::Array(item[1..].to_vec())),
            _ => {}
        }
    }
    let finished: std::collections::HashSet<&str> = rows
        .iter()
        .filter_map(|r| r.get(0).and_then(serde_json::Value::as_str))
        .collect();
    let running = started
        .iter()
        .filter(|id| !finished.contains(id.as_str()))
        .cloned()
        .collect();
    let doc = serde_json::json!({ "tests": rows, "errors": errors });
    let tests = parse_huddle_pytest(doc.to_string().as_bytes()).unwrap_or_default();
    (tests, running)
}
