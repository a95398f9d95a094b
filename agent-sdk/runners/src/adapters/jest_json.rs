//! Jest's `--json` report (vitest's json reporter writes the same format): suites, their
//! assertions and locations, turned into huddle's test results.

use super::relative;
use crate::limits::truncate_middle;
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
    message: Capped,
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
    failure_messages: Vec<Capped>,
    #[serde(default)]
    location: Option<Location>,
}

/// A failure text cut to [`PARSE_CAP`] as it is read, so a huge message is never held twice
/// (the run's own caps, [`crate::limits`], apply after).
#[derive(Default)]
struct Capped(String);

/// The most of one failure text kept while parsing.
const PARSE_CAP: usize = 1024 * 1024;

impl<'de> Deserialize<'de> for Capped {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Capped;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E>(self, v: &str) -> Result<Capped, E> {
                Ok(Capped(truncate_middle(v, PARSE_CAP).into_owned()))
            }
        }
        d.deserialize_str(Visitor)
    }
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
    Ok(results(output, root, &[]))
}

/// Parses a jest-format report file as it is read, repaired on the way
/// ([`crate::text::RepairedJson`]), never holding the whole file. `None` when the file is
/// missing or empty.
///
/// `projects` gives each suite's project, in report order (from huddle's progress reporter):
/// when projects have names (`displayName`), ids carry the project after the file
/// (`src/x.test.js::[unit]::title`), since one file run by two projects is two suites.
pub(crate) fn parse_jest_json_file(
    path: &Path,
    root: &Path,
    projects: &[(String, Option<String>)],
) -> Option<Result<Vec<TestResult>, serde_json::Error>> {
    let file = std::fs::File::open(path).ok()?;
    if file.metadata().ok()?.len() == 0 {
        return None;
    }
    let reader = crate::text::RepairedJson::new(std::io::BufReader::new(file));
    Some(serde_json::from_reader::<_, Output>(reader).map(|output| results(output, root, projects)))
}

fn results(output: Output, root: &Path, projects: &[(String, Option<String>)]) -> Vec<TestResult> {
    // Any named project labels the ids, so a re-run of one project (`--selectProjects`)
    // gives the same ids as the run of all of them.
    let labelled =
        projects.iter().any(|(_, p)| p.is_some()) && projects.len() == output.suites.len();
    let mut tests = Vec::new();
    for (i, suite) in output.suites.into_iter().enumerate() {
        let file = relative(root, &suite.name);
        let project = projects
            .get(i)
            .filter(|(f, _)| labelled && *f == suite.name)
            .and_then(|(_, p)| p.as_deref());
        let prefix = match project {
            Some(p) => format!("{file}::[{p}]"),
            None => file.clone(),
        };
        let any_failed = suite.assertions.iter().any(|a| a.status == "failed");
        for a in suite.assertions {
            let mut nodeid = String::with_capacity(prefix.len() + a.title.len() + 16);
            nodeid.push_str(&prefix);
            for part in a.ancestors.iter().chain(std::iter::once(&a.title)) {
                nodeid.push_str("::");
                nodeid.push_str(part);
            }
            let outcome = outcome(&a.status);
            let longrepr = (outcome == Outcome::Failed).then(|| {
                let texts: Vec<&str> = a.failure_messages.iter().map(|m| m.0.as_str()).collect();
                strip_ansi(&texts.join("\n")).into_owned()
            });
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
            let mut t = TestResult::new(prefix.clone(), Outcome::Error);
            t.file = Some(file);
            t.longrepr = Some(strip_ansi(suite.message.0.trim()).into_owned());
            tests.push(t);
        }
    }
    tests
}
