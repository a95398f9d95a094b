//! Reading a chat completion leniently, then the fix inside it: JSON as asked (in `content` or
//! in a tool call's `arguments`, which may be a string or an object, whatever `finish_reason`
//! says), else SEARCH/REPLACE text blocks.

use super::LlmError;
use crate::edits::Edit;
use serde::Deserialize;
use serde_json::Value;

/// Token counts an endpoint reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Tokens in the prompt.
    pub prompt_tokens: u64,
    /// Tokens in the answer.
    pub completion_tokens: u64,
    /// Both.
    pub total_tokens: u64,
}

/// The parts of a chat completion that matter here.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatReply {
    /// `choices[0].message.content`, text parts joined.
    pub content: Option<String>,
    /// `choices[0].message.tool_calls[].function.arguments`, objects serialised.
    pub tool_arguments: Vec<String>,
    /// `choices[0].finish_reason`.
    pub finish_reason: Option<String>,
    /// `usage`, when present.
    pub usage: Option<Usage>,
}

/// Reads a chat-completions body.
pub fn parse_completion(body: &Value) -> Result<ChatReply, LlmError> {
    let choice = body
        .pointer("/choices/0")
        .ok_or_else(|| LlmError::Malformed("no choices[0]".into()))?;
    let message = choice
        .get("message")
        .ok_or_else(|| LlmError::Malformed("no choices[0].message".into()))?;
    let content = match message.get("content") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(parts)) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str).or(p.as_str()))
                .collect::<Vec<_>>()
                .join(""),
        ),
        _ => None,
    };
    let tool_arguments = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .filter_map(|c| c.pointer("/function/arguments"))
                .map(|a| match a {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect()
        })
        .unwrap_or_default();
    let usage = body.get("usage").filter(|u| u.is_object()).map(|u| {
        let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
        let (p, c) = (n("prompt_tokens"), n("completion_tokens"));
        Usage {
            prompt_tokens: p,
            completion_tokens: c,
            total_tokens: u
                .get("total_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(p + c),
        }
    });
    Ok(ChatReply {
        content,
        tool_arguments,
        finish_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_string),
        usage,
    })
}

/// What the model proposes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProposedFix {
    /// The edits, to be applied all or none.
    pub edits: Vec<Edit>,
    /// The model's short explanation.
    pub explanation: String,
    /// Set when the model says a code change cannot fix this: (`environment` | `architecture` |
    /// `other`, reason).
    pub cannot_fix: Option<(String, String)>,
}

#[derive(Deserialize)]
struct WireEdit {
    #[serde(alias = "file", alias = "filename", alias = "file_path")]
    path: String,
    #[serde(alias = "old", alias = "find", alias = "old_text", default)]
    search: String,
    #[serde(alias = "new", alias = "new_text", alias = "replacement", default)]
    replace: String,
}

/// `cannot_fix` as asked for, or as a bare string (taken as the reason).
#[derive(Deserialize)]
#[serde(untagged)]
enum WireCannotFix {
    Object {
        #[serde(default)]
        category: String,
        #[serde(default)]
        reason: String,
    },
    Reason(String),
}

#[derive(Deserialize)]
struct WireFix {
    #[serde(default)]
    edits: Vec<WireEdit>,
    #[serde(default)]
    explanation: String,
    #[serde(default)]
    cannot_fix: Option<WireCannotFix>,
}

/// The fix in a reply, or why none could be read (the reason goes back to the model).
pub fn parse_fix(reply: &ChatReply) -> Result<ProposedFix, String> {
    let mut json_error = None;
    let content = reply.content.as_deref().unwrap_or("");
    for text in reply
        .tool_arguments
        .iter()
        .map(String::as_str)
        .chain([content])
    {
        match from_json(text) {
            Some(Ok(fix)) => return Ok(fix),
            Some(Err(e)) => json_error = json_error.or(Some(e)),
            None => {}
        }
    }
    let blocks = search_replace_blocks(content);
    if !blocks.is_empty() {
        return Ok(ProposedFix {
            edits: blocks,
            explanation: String::new(),
            cannot_fix: None,
        });
    }
    Err(match json_error {
        Some(e) => format!("the reply was not valid JSON ({e}); answer with one JSON object with `edits`, `explanation` and `cannot_fix`"),
        None if content.trim().is_empty() && reply.tool_arguments.is_empty() => "the reply was empty".into(),
        None => "the reply contained neither the JSON object asked for nor SEARCH/REPLACE blocks".into(),
    })
}

/// `None` when `text` does not look like JSON at all; else the fix or the parse error.
fn from_json(text: &str) -> Option<Result<ProposedFix, String>> {
    let trimmed = strip_fence(text.trim()).trim();
    let parse = |t: &str| serde_json::from_str::<WireFix>(t).map(convert);
    if trimmed.starts_with('{') {
        return Some(parse(trimmed).map_err(|e| e.to_string()));
    }
    // Prose around an object: take the outermost braces when they hold a whole fix.
    let (start, end) = (trimmed.find('{')?, trimmed.rfind('}')?);
    (start < end)
        .then(|| parse(&trimmed[start..=end]).ok())
        .flatten()
        .map(Ok)
}

fn strip_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let rest = rest.split_once('\n').map_or("", |(_, r)| r);
    rest.trim_end().strip_suffix("```").unwrap_or(rest)
}

fn convert(w: WireFix) -> ProposedFix {
    ProposedFix {
        edits: w
            .edits
            .into_iter()
            .map(|e| Edit {
                path: e.path,
                search: e.search,
                replace: e.replace,
            })
            .collect(),
        explanation: w.explanation,
        cannot_fix: w
            .cannot_fix
            .map(|c| match c {
                WireCannotFix::Object { category, reason } => (category, reason),
                WireCannotFix::Reason(reason) => ("other".into(), reason),
            })
            .filter(|(category, reason)| !reason.trim().is_empty() || !category.is_empty()),
    }
}

/// `path` on its own line, then `<<<<<<< SEARCH`, the text, `=======`, the replacement and
/// `>>>>>>> REPLACE` (the format aider made common), possibly inside code fences.
pub fn search_replace_blocks(text: &str) -> Vec<Edit> {
    let lines: Vec<&str> = text.lines().collect();
    let mut edits = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].trim_start().starts_with("<<<<<<< SEARCH") {
            i += 1;
            continue;
        }
        let path = lines[..i]
            .iter()
            .rev()
            .map(|l| l.trim())
            .find(|l| !l.is_empty() && !l.starts_with("```"))
            .map(|l| {
                l.trim_start_matches("File:")
                    .trim()
                    .trim_matches('`')
                    .to_string()
            });
        let (mut search, mut replace, mut j) = (Vec::new(), Vec::new(), i + 1);
        while j < lines.len() && lines[j].trim_end() != "=======" {
            search.push(lines[j]);
            j += 1;
        }
        j += 1;
        while j < lines.len() && !lines[j].trim_start().starts_with(">>>>>>> REPLACE") {
            replace.push(lines[j]);
            j += 1;
        }
        if let (Some(path), true) = (path, j < lines.len()) {
            let join = |v: &[&str]| {
                if v.is_empty() {
                    String::new()
                } else {
                    format!("{}\n", v.join("\n"))
                }
            };
            edits.push(Edit {
                path,
                search: join(&search),
                replace: join(&replace),
            });
        }
        i = j + 1;
    }
    edits
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
