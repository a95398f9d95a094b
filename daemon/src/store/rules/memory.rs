//! Shared memory's rules: how a merge patch, JSON Patch or replacement changes the document,
//! and the limits the result must keep.

use super::super::{StoreError, StoreResult};
use super::validate;
use serde_json::Value;

/// Limits for a shared-memory change: nesting, size, and how many history entries to keep.
#[derive(Debug, Clone, Copy)]
pub struct MemoryLimits {
    pub max_depth: usize,
    pub max_bytes: usize,
    pub history: usize,
}

/// How the shared memory changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryChangeKind {
    /// RFC 7396 merge patch.
    Merge,
    /// RFC 6902 JSON Patch, all operations or none.
    JsonPatch,
    Replace,
}

impl MemoryChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryChangeKind::Merge => "merge",
            MemoryChangeKind::JsonPatch => "json-patch",
            MemoryChangeKind::Replace => "replace",
        }
    }
}

/// The shared memory after a change, checked, with its JSON text: it must stay an object
/// within the depth and size limits.
pub fn changed_memory(
    current: Value,
    kind: MemoryChangeKind,
    patch: &Value,
    limits: MemoryLimits,
) -> StoreResult<(Value, String)> {
    let doc = match kind {
        MemoryChangeKind::Merge => {
            let mut doc = current;
            json_patch::merge(&mut doc, patch);
            doc
        }
        MemoryChangeKind::JsonPatch => apply_ops(current, patch)?,
        MemoryChangeKind::Replace => patch.clone(),
    };
    if !doc.is_object() {
        return Err(StoreError::invalid(
            "doc",
            "the shared memory document must stay a JSON object",
        ));
    }
    validate::depth("doc", &doc, limits.max_depth)?;
    let text = doc.to_string();
    if text.len() > limits.max_bytes {
        return Err(StoreError::TooLarge {
            message: format!(
                "the shared memory document would be {} bytes; the limit is {}",
                text.len(),
                limits.max_bytes
            ),
        });
    }
    Ok((doc, text))
}

/// Applies RFC 6902 operations to `doc`, all or none; an error names the operation, its path
/// and what is wrong there in words ("/arr is a string, not an object or array").
fn apply_ops(mut doc: Value, ops: &Value) -> StoreResult<Value> {
    let parsed: json_patch::Patch = serde_json::from_value(ops.clone()).map_err(|e| {
        StoreError::invalid(
            "patch",
            format!("a JSON Patch is a list of {{\"op\", \"path\", \"value\"?, \"from\"?}} operations: {e}"),
        )
    })?;
    let before = doc.clone();
    json_patch::patch(&mut doc, &parsed).map_err(|e| {
        let why = explain(&before, &e.path.to_string());
        StoreError::invalid(
            "patch",
            format!("operation {} at {}: {}{why}", e.operation, e.path, e.kind),
        )
    })?;
    Ok(doc)
}

/// What is at a failed path's parent, when that explains the failure.
fn explain(doc: &Value, path: &str) -> String {
    let parent = path.rsplit_once('/').map_or("", |(p, _)| p);
    match doc.pointer(parent) {
        None => format!(
            " ({} does not exist)",
            if parent.is_empty() { "/" } else { parent }
        ),
        Some(v) if !v.is_object() && !v.is_array() => {
            let kind = match v {
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                Value::Bool(_) => "a boolean",
                _ => "null",
            };
            format!(" ({parent} is {kind}, not an object or array)")
        }
        Some(_) => String::new(),
    }
}
