//! What a jest or vitest run stopped at its timeout had done: both write their JSON report
//! only at the end, so huddle adds a small reporter of its own (`js/huddle_jest_progress.cjs`
//! beside jest's default one, `js/huddle_vitest_progress.mjs` beside vitest's json one) that
//! appends a line as each test starts and ends. From those lines a killed run keeps the tests
//! that finished and names the ones that were running. The same reporters list each file
//! result's project, which neither JSON report names.

use super::relative;
use crate::limits::truncate_middle;
use crate::report::{Outcome, TestResult};
use crate::scrub::strip_ansi;
use serde::Deserialize;
use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

/// The reporter, written into the run directory for each run.
pub(crate) const REPORTER: &str = include_str!("js/huddle_jest_progress.cjs");
/// Its file name in the run directory (`.cjs`: CommonJS whatever the project's `type`).
pub(crate) const REPORTER_FILE: &str = "huddle_jest_progress.cjs";
/// The file it appends to, named by `HUDDLE_JEST_PROGRESS`.
pub(crate) const PROGRESS_FILE: &str = "jest-progress.jsonl";
/// The file it lists each file result and its project in, named by `HUDDLE_JEST_FILES`: kept
/// apart from the progress lines, which carry failure messages of any size.
pub(crate) const FILES_FILE: &str = "jest-files.jsonl";

/// The most of one failure text kept from a progress line.
const LINE_CAP: usize = 1024 * 1024;

#[derive(Deserialize)]
struct Line {
    event: String,
    file: String,
    #[serde(default)]
    project: Option<String>,
    #[serde(rename = "ancestorTitles", default)]
    ancestors: Vec<String>,
    #[serde(default)]
    title: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
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

/// Each file result's project (its `displayName`), in the order of the `--json` report's
/// suites, from the reporter's file list; empty without one.
pub(crate) fn file_projects(path: &Path) -> Vec<(String, Option<String>)> {
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    std::io::BufReader::new(file)
        .split(b'\n')
        .map_while(Result::ok)
        .filter_map(|raw| serde_json::from_str::<Line>(&crate::text::json(&raw)).ok())
        .filter(|l| l.event == "file")
        .map(|l| (l.file, l.project))
        .collect()
}

/// The tests that finished and the ids of those still running, from a progress file.
pub(crate) fn read_progress(path: &Path, root: &Path) -> (Vec<TestResult>, Vec<String>) {
    let Ok(file) = std::fs::File::open(path) else {
        return (Vec::new(), Vec::new());
    };
    let mut tests = Vec::new();
    // Started tests not yet ended, by id, counted (test.each cases may share a title).
    let mut open: Vec<(String, usize)> = Vec::new();
    let mut open_at: HashMap<String, usize> = HashMap::new();
    for raw in std::io::BufReader::new(file)
        .split(b'\n')
        .map_while(Result::ok)
    {
        let text = crate::text::json(&raw);
        let Ok(line) = serde_json::from_str::<Line>(&text) else {
            continue;
        };
        let file = relative(root, &line.file);
        if line.event == "file" {
            continue;
        }
        // A named project goes into the id, as in a finished run's report.
        let prefix = match &line.project {
            Some(p) => format!("{file}::[{p}]"),
            None => file.clone(),
        };
        if line.event == "file-error" {
            let mut t = TestResult::new(prefix, Outcome::Error);
            t.file = Some(file);
            t.longrepr =
                Some(strip_ansi(&truncate_middle(line.message.trim(), LINE_CAP)).into_owned());
            tests.push(t);
            continue;
        }
        let mut nodeid = prefix;
        for part in line.ancestors.iter().chain(std::iter::once(&line.title)) {
            nodeid.push_str("::");
            nodeid.push_str(part);
        }
        if line.event == "start" {
            let at = *open_at.entry(nodeid.clone()).or_insert_with(|| {
                open.push((nodeid.clone(), 0));
                open.len() - 1
            });
            open[at].1 += 1;
            continue;
        }
        if let Some(&at) = open_at.get(&nodeid) {
            open[at].1 = open[at].1.saturating_sub(1);
        }
        let outcome = match line.status.as_str() {
            "passed" => Outcome::Passed,
            "failed" => Outcome::Failed,
            _ => Outcome::Skipped,
        };
        let longrepr = (outcome == Outcome::Failed).then(|| {
            let joined = line.failure_messages.join("\n");
            strip_ansi(&truncate_middle(&joined, LINE_CAP)).into_owned()
        });
        tests.push(TestResult {
            nodeid,
            outcome,
            duration: line.duration.unwrap_or(0.0) / 1000.0,
            file: Some(file),
            lineno: line.location.map(|l| l.line),
            longrepr,
        });
    }
    let running = open
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(id, _)| id)
        .collect();
    (tests, running)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finished_tests_are_kept_and_the_running_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let path = root.join(PROGRESS_FILE);
        let file = root.join("src/a.test.js").display().to_string();
        let line = |event: &str, title: &str, extra: &str| {
            format!(
                r#"{{"event":"{event}","file":"{file}","ancestorTitles":["outer"],"title":"{title}"{extra}}}"#
            )
        };
        let text = [
            line("start", "fast", ""),
            line("result", "fast", r#","status":"passed","duration":3"#),
            line("start", r"broken \ud800", ""),
            line(
                "result",
                r"broken \ud800",
                r#","status":"failed","failureMessages":["boom"]"#,
            ),
            line("start", "hangs", ""),
            format!(
                r#"{{"event":"result","file":"{file}","project":"strict","ancestorTitles":[],"title":"named","status":"passed"}}"#
            ),
        ]
        .join("\n");
        std::fs::write(&path, text + "\n{\"event\":\"res").unwrap();
        let (tests, running) = read_progress(&path, root);
        let ids: Vec<(&str, Outcome)> = tests
            .iter()
            .map(|t| (t.nodeid.as_str(), t.outcome))
            .collect();
        assert_eq!(
            ids,
            [
                ("src/a.test.js::outer::fast", Outcome::Passed),
                ("src/a.test.js::outer::broken \u{fffd}", Outcome::Failed),
                ("src/a.test.js::[strict]::named", Outcome::Passed),
            ]
        );
        assert_eq!(running, ["src/a.test.js::outer::hangs"]);
    }
}
