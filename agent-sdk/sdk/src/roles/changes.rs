//! Every fix made visible: what one fix changed (for its `impl_progress`), and what the whole
//! cycle changed compared with the files as they were before the first fix (for `test_result`
//! and the task's result) — a fix rolled back leaves no trace there.

use crate::edits::diff::{scrubbed_and_capped, unified, MAX_DIFF_BYTES};
use crate::edits::guard::changed_expectations;
use crate::edits::{is_test_file, Applied};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One applied fix, as posted.
#[derive(Debug, Clone)]
pub(crate) struct FixChange {
    /// Files changed or created.
    pub files: Vec<String>,
    /// Their unified diff, scrubbed and capped.
    pub diff: String,
}

impl FixChange {
    pub fn of(applied: &Applied) -> FixChange {
        FixChange {
            files: applied.files.clone(),
            diff: scrubbed_and_capped(&applied.diff, MAX_DIFF_BYTES),
        }
    }
}

/// The message fields for `files` and `diff`: `changedFiles`, `diff`, and `testFilesChanged`
/// (the test files among them) when there are any.
pub(crate) fn change_fields(files: &[String], diff: &str) -> serde_json::Map<String, Value> {
    let mut out = serde_json::Map::new();
    out.insert("changedFiles".into(), json!(files));
    out.insert("diff".into(), json!(diff));
    let tests: Vec<&String> = files.iter().filter(|f| is_test_file(f)).collect();
    if !tests.is_empty() {
        out.insert("testFilesChanged".into(), json!(tests));
    }
    out
}

/// The cycle's changes so far.
#[derive(Debug, Default)]
pub(crate) struct Changes {
    project: PathBuf,
    /// Each file touched, as it was before the first fix that touched it.
    originals: BTreeMap<String, Option<String>>,
}

/// What the cycle changed in the end.
#[derive(Debug, Clone, Default)]
pub(crate) struct ChangeSummary {
    /// Files that differ from before the cycle.
    pub files: Vec<String>,
    /// Their diff, scrubbed and capped.
    pub diff: String,
    /// Expectations of test files that are no longer there (the executor's edits, flagged).
    pub changed_expectations: Vec<Value>,
}

impl Changes {
    pub fn new(project: PathBuf) -> Changes {
        Changes {
            project,
            originals: BTreeMap::new(),
        }
    }

    /// Remembers the files a fix is about to change (their state before it), once per file.
    pub fn note(&mut self, applied: &Applied) {
        for (rel, before) in applied.snapshot.contents() {
            self.originals
                .entry(rel.to_string())
                .or_insert_with(|| before.map(|b| String::from_utf8_lossy(b).into_owned()));
        }
    }

    /// The files as they are now against the originals.
    pub fn summary(&self) -> ChangeSummary {
        let mut out = ChangeSummary::default();
        let mut diff = String::new();
        for (rel, before) in &self.originals {
            let now = std::fs::read_to_string(self.project.join(rel)).ok();
            if &now == before {
                continue;
            }
            out.files.push(rel.clone());
            diff.push_str(&unified(rel, before.as_deref(), now.as_deref()));
            if is_test_file(rel) {
                for line in changed_expectations(
                    before.as_deref().unwrap_or(""),
                    now.as_deref().unwrap_or(""),
                ) {
                    out.changed_expectations
                        .push(json!({"path": rel, "was": line}));
                }
            }
        }
        out.diff = scrubbed_and_capped(&diff, MAX_DIFF_BYTES);
        out
    }
}
