//! The event lines huddle's reporter for `node --test` writes (`js/huddle_node_test_reporter.mjs`):
//! `test:start`, `test:pass`, `test:fail` (tests and suites), and what a file printed. Counted
//! as node's own summary counts: every test, a parent test with subtests included, suites
//! (`describe`) not; `skip` and `todo` are skipped; a file that fails outside its tests (it
//! does not load) is an error named by the file, with what it printed on stderr.

use super::relative;
use crate::limits::truncate_middle;
use crate::report::{Outcome, TestResult};
use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;

#[derive(Deserialize)]
struct Line {
    event: String,
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    name: String,
    #[serde(default)]
    nesting: usize,
    #[serde(default)]
    suite: bool,
    #[serde(default)]
    skip: bool,
    #[serde(default)]
    todo: bool,
    #[serde(default)]
    duration: f64,
    #[serde(default)]
    line: Option<u32>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

/// The most of one failure text or file output kept while reading.
const CAP: usize = 1024 * 1024;

/// The tests in the order they ended, and the ids of tests started and not ended.
pub fn parse_node_test_events(text: &str, root: &Path) -> (Vec<TestResult>, Vec<String>) {
    let mut tests = Vec::new();
    // Per file: the names of the tests open at each nesting level.
    let mut stacks: HashMap<String, Vec<String>> = HashMap::new();
    let mut stderr: HashMap<String, String> = HashMap::new();
    let mut open: Vec<String> = Vec::new();
    for raw in text.lines() {
        let Ok(line) = serde_json::from_str::<Line>(&crate::text::json_escapes_fixed(raw)) else {
            continue;
        };
        let abs = line.file.clone().unwrap_or_default();
        let file = relative(root, &abs);
        let stack = stacks.entry(file.clone()).or_default();
        match line.event.as_str() {
            "test:stderr" => {
                let out = stderr.entry(file).or_default();
                if out.len() < CAP {
                    out.push_str(line.message.as_deref().unwrap_or(""));
                }
                continue;
            }
            "test:stdout" => continue,
            "test:start" => {
                stack.truncate(line.nesting);
                stack.push(line.name.clone());
                open.push(id_of(&file, stack));
                continue;
            }
            _ => {}
        }
        stack.truncate(line.nesting);
        stack.push(line.name.clone());
        let nodeid = id_of(&file, stack);
        stack.pop();
        if let Some(at) = open.iter().rposition(|o| *o == nodeid) {
            open.remove(at);
        }
        if line.suite {
            // A suite is not a test; one that fails outside its tests (a hook) is an error.
            let failed_alone = line.event == "test:fail"
                && !tests.iter().any(|t: &TestResult| {
                    t.outcome.is_failure() && t.nodeid.starts_with(&format!("{nodeid}::"))
                });
            if !failed_alone {
                continue;
            }
        }
        // A file that failed as a whole: node names the failure by the file's path.
        let whole_file = line.nesting == 0 && !abs.is_empty() && line.name == abs;
        let outcome = match line.event.as_str() {
            "test:fail" if whole_file || line.suite => Outcome::Error,
            "test:fail" => Outcome::Failed,
            _ if line.skip || line.todo => Outcome::Skipped,
            _ => Outcome::Passed,
        };
        let mut t = TestResult::new(if whole_file { file.clone() } else { nodeid }, outcome);
        t.duration = line.duration / 1000.0;
        t.file = Some(file.clone());
        t.lineno = line.line.filter(|_| !whole_file);
        if outcome.is_failure() {
            let mut text = line.error.unwrap_or_default();
            if whole_file {
                if let Some(out) = stderr.get(&file) {
                    text = format!("{}\n{text}", out.trim_end());
                }
            }
            t.longrepr = Some(truncate_middle(text.trim(), CAP).into_owned());
        }
        tests.push(t);
    }
    (tests, open)
}

fn id_of(file: &str, stack: &[String]) -> String {
    let mut id = file.to_string();
    for part in stack {
        id.push_str("::");
        id.push_str(part);
    }
    id
}
