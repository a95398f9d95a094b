//! What a mocha run stopped at its timeout had done: mocha's json reporter writes only at the
//! end, so huddle runs it through a subclass of its own (`js/huddle_mocha_reporter.cjs`) that
//! also appends a line as each test starts and ends. From those lines a killed run keeps the
//! tests that finished (with the ids of a finished run's report) and names the one running.

use super::mocha_json::Test;
use crate::report::{Outcome, TestResult};
use serde::Deserialize;
use std::io::BufRead;
use std::path::Path;

/// The reporter, written into the run directory for each run.
pub(crate) const REPORTER: &str = include_str!("js/huddle_mocha_reporter.cjs");
/// Its file name in the run directory (`.cjs`: CommonJS whatever the project's `type`).
pub(crate) const REPORTER_FILE: &str = "huddle_mocha_reporter.cjs";
/// The file it appends to, named by `HUDDLE_MOCHA_PROGRESS`.
pub(crate) const PROGRESS_FILE: &str = "mocha-progress.jsonl";

#[derive(Deserialize)]
struct Line {
    event: String,
    #[serde(default)]
    hook: bool,
    #[serde(flatten)]
    test: Test,
}

/// The tests that finished and the ids of those still running, from a progress file.
pub(crate) fn read_progress(path: &Path, root: &Path) -> (Vec<TestResult>, Vec<String>) {
    let Ok(file) = std::fs::File::open(path) else {
        return (Vec::new(), Vec::new());
    };
    let mut tests: Vec<TestResult> = Vec::new();
    let mut running: Vec<String> = Vec::new();
    for raw in std::io::BufReader::new(file)
        .split(b'\n')
        .map_while(Result::ok)
    {
        let Ok(line) = serde_json::from_str::<Line>(&crate::text::json(&raw)) else {
            continue;
        };
        let outcome = match (line.event.as_str(), line.hook) {
            ("start", _) => {
                running.push(line.test.result(root, Outcome::Passed).nodeid);
                continue;
            }
            ("passed", _) => Outcome::Passed,
            // A failing hook is no test of its own: an error, as in the json report.
            ("failed", true) => Outcome::Error,
            ("failed", false) => Outcome::Failed,
            ("pending", _) => Outcome::Skipped,
            _ => continue,
        };
        let t = line.test.result(root, outcome);
        if let Some(at) = running.iter().position(|id| *id == t.nodeid) {
            running.remove(at);
        }
        tests.push(t);
    }
    (tests, running)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finished_tests_are_kept_and_the_running_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let file = root.join("test/a.spec.js").display().to_string();
        let line = |event: &str, title: &str, extra: &str| {
            format!(
                r#"{{"event":"{event}","title":"{title}","fullTitle":"outer {title}","file":"{file}"{extra}}}"#
            )
        };
        let text = [
            line("start", "fast", ""),
            line("passed", "fast", r#","duration":3"#),
            line("start", "broken", ""),
            line(
                "failed",
                "broken",
                r#","err":{"message":"boom","stack":"Error: boom"}"#,
            ),
            line("pending", "later", ""),
            line("failed", r#"\"before each\" hook"#, r#","hook":true"#),
            line("start", "hangs", ""),
        ]
        .join("\n");
        let path = root.join(PROGRESS_FILE);
        std::fs::write(&path, text + "\n{\"event\":\"pas").unwrap();
        let (tests, running) = read_progress(&path, root);
        let ids: Vec<(&str, Outcome)> = tests
            .iter()
            .map(|t| (t.nodeid.as_str(), t.outcome))
            .collect();
        assert_eq!(
            ids,
            [
                ("test/a.spec.js::outer::fast", Outcome::Passed),
                ("test/a.spec.js::outer::broken", Outcome::Failed),
                ("test/a.spec.js::outer::later", Outcome::Skipped),
                (
                    "test/a.spec.js::outer::\"before each\" hook",
                    Outcome::Error
                ),
            ]
        );
        assert_eq!(tests[1].longrepr.as_deref(), Some("Error: boom"));
        assert_eq!(running, ["test/a.spec.js::outer::hangs"]);
    }
}
