//! Shared memory's rules: how a merge patch, JSON Patch or replacement changes the document,
//! and the limits the result must keep.

use super::super::error::{StoreError, StoreResult};
use super::{memory_patch, validate};
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
        MemoryChangeKind::JsonPatch => memory_patch::apply_bounded(current, patch, limits)?,
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
