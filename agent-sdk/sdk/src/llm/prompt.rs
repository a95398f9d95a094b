//! What the code-developer model is asked: the goal (by strategy and role), the failure output
//! (ANSI stripped, secrets scrubbed, truncated), the files in scope (scrubbed too), the rules,
//! and why its previous answer was refused. The answer is asked for as JSON matching
//! [`response_format`].

use crate::cycles::Strategy;
use crate::runners::scrub;
use serde_json::{json, Value};
use std::fmt::Write as _;

/// Lines of failure output kept per test.
pub const FAILURE_LINES: usize = 60;
/// Characters of one file shown before it is cut.
pub const FILE_CHARS: usize = 24_000;
/// Characters of all files together.
pub const TOTAL_FILE_CHARS: usize = 96_000;

/// A file shown to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeFile {
    /// Relative to the project root.
    pub path: String,
    /// Its text.
    pub contents: String,
    /// Whether the role may change it (else it is context only).
    pub editable: bool,
}

/// One fix to ask for.
#[derive(Debug, Clone, PartialEq)]
pub struct FixRequest {
    /// `true` for the executor: only test files may change.
    pub tests_only: bool,
    /// Whether test files may change at all (the tester: only when the task allows it).
    pub test_edits: bool,
    /// The strategy of this attempt.
    pub strategy: Strategy,
    /// The framework, for the model's orientation (`pytest`, `jest`…).
    pub framework: String,
    /// The task's subject and description.
    pub task: String,
    /// Failing tests and their output, most severe first.
    pub failures: Vec<(String, String)>,
    /// The files in scope.
    pub files: Vec<ScopeFile>,
    /// Why earlier answers were refused, oldest first.
    pub feedback: Vec<String>,
}

const RULES: &str = "Rules:
- Answer with exactly one JSON object: {\"edits\": [{\"path\", \"search\", \"replace\"}], \"explanation\", \"cannot_fix\"}.
- `path` is relative to the project root; edit only the files shown and marked editable.
- `search` is copied exactly from the file (whitespace included) and must occur exactly once in it; include enough surrounding lines. An empty `search` creates a new file.
- All edits are applied together or not at all.
- Never skip, ignore, disable or delete tests or assertions: no @pytest.mark.skip, it.skip, xit, .only, t.Skip, #[ignore]; no @ts-ignore and no `as any`.
- Never edit lockfiles, .git/, CI configuration or dependency manifests to make tests pass.
- Never edit test configuration (pytest.ini, conftest.py, jest/vitest/mocha config, the test script, tox.ini) and never rename or deselect a test: a failing test that stops running still counts as failed.
- If no code change can fix the failure (a missing dependency or service, a broken environment, a design problem), answer with no edits and set `cannot_fix` to {\"category\": \"environment\" | \"architecture\" | \"other\", \"reason\": \"...\"}; otherwise `cannot_fix` is null.
- Nothing you write is executed; only your edits are applied.";

/// The chat messages for `request`.
pub fn messages(request: &FixRequest) -> Vec<Value> {
    let who = if request.tests_only {
        "You repair failing tests in an automated QA team. You may change test files only: when a test is wrong or outdated, fix the test; when the code under test is wrong, say so with `cannot_fix` (category \"other\"). Every change you make to an expectation is shown to the coordinator."
    } else if request.test_edits {
        "You are the code developer of an automated QA team. Tests fail; find the cause and fix it in the code under test. You may repair a test's setup or imports, but never change what a test expects."
    } else {
        "You are the code developer of an automated QA team. Tests fail; find the cause and fix it in the code under test. Test files are read-only: never change, rename, skip or deselect a test or what it expects."
    };
    vec![
        json!({"role": "system", "content": format!("{who}\n\n{RULES}")}),
        json!({"role": "user", "content": user_message(request)}),
    ]
}

fn goal(strategy: Strategy, tests: usize) -> String {
    match strategy {
        Strategy::Conservative => "Make one targeted fix for the failing test below; change as little as possible.".into(),
        Strategy::Aggressive => format!("These {tests} failures look alike and keep repeating: fix them together in one batch, at their common cause."),
        Strategy::Surgical => "The last fix made things worse and has been rolled back. Make one minimal fix for the failing test below, touching as few lines as possible.".into(),
    }
}

fn user_message(r: &FixRequest) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Goal: {}", goal(r.strategy, r.failures.len()));
    let _ = writeln!(out, "Framework: {}", r.framework);
    if !r.task.trim().is_empty() {
        let _ = writeln!(out, "Task: {}", scrub::scrub(r.task.trim()));
    }
    if !r.feedback.is_empty() {
        let _ = writeln!(
            out,
            "\nYour previous answer was refused; fix these problems:"
        );
        for f in &r.feedback {
            let _ = writeln!(out, "- {f}");
        }
    }
    let _ = writeln!(out, "\nFailing tests:");
    for (test, output) in &r.failures {
        let _ = writeln!(
            out,
            "\n### {test}\n```\n{}\n```",
            scrub::for_message(output, FAILURE_LINES)
        );
    }
    let _ = writeln!(out, "\nFiles:");
    let mut budget = TOTAL_FILE_CHARS;
    for f in &r.files {
        if budget == 0 {
            let _ = writeln!(out, "\n(more files omitted: size limit)");
            break;
        }
        let text = scrub::scrub(&f.contents);
        let limit = FILE_CHARS.min(budget);
        let (shown, cut) = match text.char_indices().nth(limit) {
            Some((i, _)) => (&text[..i], true),
            None => (text.as_ref(), false),
        };
        budget = budget.saturating_sub(shown.len());
        let mode = if f.editable { "editable" } else { "read-only" };
        let _ = writeln!(
            out,
            "\n--- {} ({mode}) ---\n{shown}{}",
            f.path,
            if cut {
                "\n[… cut: file too long]"
            } else {
                ""
            }
        );
    }
    out
}

/// `response_format` asking for the fix as JSON (OpenAI structured outputs).
pub fn response_format() -> Value {
    json!({
        "type": "json_schema",
        "json_schema": {
            "name": "code_edits",
            "strict": true,
            "schema": {
                "type": "object",
                "additionalProperties": false,
                "required": ["edits", "explanation", "cannot_fix"],
                "properties": {
                    "edits": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "additionalProperties": false,
                            "required": ["path", "search", "replace"],
                            "properties": {
                                "path": {"type": "string"},
                                "search": {"type": "string"},
                                "replace": {"type": "string"}
                            }
                        }
                    },
                    "explanation": {"type": "string"},
                    "cannot_fix": {
                        "anyOf": [
                            {"type": "null"},
                            {
                                "type": "object",
                                "additionalProperties": false,
                                "required": ["category", "reason"],
                                "properties": {
                                    "category": {"type": "string", "enum": ["environment", "architecture", "other"]},
                                    "reason": {"type": "string"}
                                }
                            }
                        ]
                    }
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_scrubbed_and_feedback_is_included() {
        let r = FixRequest {
            tests_only: false,
            test_edits: false,
            strategy: Strategy::Conservative,
            framework: "pytest".into(),
            task: "fix it".into(),
            failures: vec![("t::a".into(), "E assert 1\nAPI_TOKEN=abcdef123456".into())],
            files: vec![ScopeFile {
                path: "a.py".into(),
                contents: "key = 'sk-abcdefghijklmnopqrstuv'\n".into(),
                editable: true,
            }],
            feedback: vec!["the search text for `a.py` was not found".into()],
        };
        let text = messages(&r)[1]["content"].as_str().unwrap().to_string();
        assert!(
            !text.contains("abcdef123456") && !text.contains("sk-abcdefghijklmnop"),
            "{text}"
        );
        assert!(text.contains("was not found"));
        assert!(text.contains("--- a.py (editable) ---"));
    }
}
