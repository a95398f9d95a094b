//! The shared memory's change history as returned by `GET /v1/teams/{team}/memory-history`.
//!
//! The daemon's store returns these types directly, so the shape has one definition.

#![warn(missing_docs)]

use serde::{Deserialize, Serialize};

/// One change to the shared memory: who made it, when, and what they sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MemoryChange {
    /// The document version this change produced.
    pub version: i64,
    /// The agent that made the change.
    pub agent: String,
    /// `merge` (a JSON Merge Patch) or `replace` (a whole new document).
    pub kind: String,
    /// The merge patch, or the new document for `replace`.
    pub patch: serde_json::Value,
    /// When the change was stored (RFC 3339).
    pub created_at: String,
}

/// `GET …/memory-history`: the most recent changes first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MemoryHistory {
    /// Newest first, bounded by the daemon's history limit.
    pub changes: Vec<MemoryChange>,
    /// The `before` of the next page (older changes), absent at the end. A page stops at its
    /// `limit` or at the daemon's `[limits] max_page_bytes`, whichever comes first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<i64>,
}
