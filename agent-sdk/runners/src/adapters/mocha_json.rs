//! Mocha's json reporter: its document (found in the output file, or at the end of stdout for
//! mocha before 9.1) turned into huddle's test results.

use super::relative;
use crate::report::{Outcome, TestResult};
use crate::scrub::strip_ansi;
use serde::Deserialize;
use std::collections::HashSet;
use std::path::Path;

#[derive(Deserialize)]
struct Output {
    #[serde(default)]
    tests: Vec<Test>,
    #[serde(default)]
    passes: Vec<Test>,
    #[serde(default)]
    failures: Vec<Test>,
    #[serde(default)]
    pending: Vec<Test>,
}

/// One test (or hook) as mocha's json reporter writes it; also the body of huddle's progress
/// lines (see [`super::mocha_progress`]).
#[derive(Deserialize)]
pub(crate) struct Test {
    title: String,
    #[serde(rename = "fullTitle")]
    full_title: String,
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default)]
    err: Option<serde_json::Value>,
}

impl Test {
    fn key(&self) -> (&str, &str) {
        (self.file.as_deref().unwrap_or(""), &self.full_title)
    }

    /// The result with huddle's node id (`file::describe titles::title`).
    pub(crate) fn result(&self, root: &Path, outcome: Outcome) -> TestResult {
        let file = self.file.as_deref().map(|f| relative(root, f));
        // fullTitle is the describe titles and the title joined by spaces.
        let prefix = self
            .full_title
            .strip_suffix(self.title.as_str())
            .map(str::trim_end)
            .unwrap_or("");
        let mut nodeid = file.clone().unwrap_or_default();
        for part in [prefix, self.title.as_str()]
            .into_iter()
            .filter(|p| !p.is_empty())
        {
            nodeid.push_str("::");
            nodeid.push_str(part);
        }
        let longrepr = outcome.is_failure().then(|| {
            let err = self.err.as_ref();
            let text = err
                .and_then(|e| e.get("stack").or_else(|| e.get("message")))
                .and_then(|v| v.as_str())
                .unwrap_or("");
            strip_ansi(text).into_owned()
        });
        TestResult {
            nodeid,
            outcome,
            duration: self.duration.unwrap_or(0.0) / 1000.0,
            file,
            lineno: None,
            longrepr,
        }
    }
}

/// Parses mocha's json reporter output. Outcomes come from the `passes`, `failures` and
/// `pending` lists; a failure that is not a test (a `before all` hook) is an error.
pub fn parse_mocha_json(bytes: &[u8], root: &Path) -> Result<Vec<TestResult>, serde_json::Error> {
    let out: Output = serde_json::from_str(&crate::text::json(bytes))?;
    let failed: HashSet<(&str, &str)> = out.failures.iter().map(Test::key).collect();
    let pending: HashSet<(&str, &str)> = out.pending.iter().map(Test::key).collect();
    let passed: HashSet<(&str, &str)> = out.passes.iter().map(Test::key).collect();
    let mut tests = Vec::new();
    let known: HashSet<(&str, &str)> = out.tests.iter().map(Test::key).collect();
    for t in &out.tests {
        let key = t.key();
        let outcome = if failed.contains(&key) {
            Outcome::Failed
        } else if pending.contains(&key) {
            Outcome::Skipped
        } else if passed.contains(&key) {
            Outcome::Passed
        } else {
            // Listed but never finished: a hook failure stopped it.
            Outcome::Skipped
        };
        let source = out.failures.iter().find(|f| f.key() == key).unwrap_or(t);
        tests.push(source.result(root, outcome));
    }
    for f in out.failures.iter().filter(|f| !known.contains(&f.key())) {
        tests.push(f.result(root, Outcome::Error));
    }
    Ok(tests)
}

/// The json reporter's document at the end of stdout: the last `{` that starts a line and
/// opens a `"stats"` object, up to the end of that JSON value.
pub fn json_on_stdout(stdout: &[u8]) -> Option<&[u8]> {
    const START: &[u8] = b"{\n  \"stats\": {";
    let start = (0..stdout.len())
        .rev()
        .find(|&i| stdout[i..].starts_with(START) && (i == 0 || stdout[i - 1] == b'\n'))?;
    let doc = &stdout[start..];
    let mut values = serde_json::Deserializer::from_slice(doc).into_iter::<serde::de::IgnoredAny>();
    values.next()?.ok()?;
    Some(&doc[..values.byte_offset()])
}

#[cfg(test)]
#[path = "mocha_json_tests.rs"]
mod tests;
