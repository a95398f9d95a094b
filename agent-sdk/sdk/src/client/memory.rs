//! The team's shared memory: read whole or by JSON Pointer, merge-patch, replace, history.

use super::transport::Call;
use super::{Client, Error};
use crate::history::MemoryHistory;
use crate::wire::{Memory, ReplaceMemory};
use reqwest::Method;

impl Client {
    /// `GET …/memory`: the whole document and its version.
    pub async fn memory(&self) -> Result<Memory, Error> {
        self.json(Call::get(self.team_url(&["memory"])?)).await
    }

    /// `GET …/memory/{pointer}`: the value at a JSON Pointer such as
    /// `/test_strategy/test_framework` (404 when nothing is there). An empty pointer or `/`
    /// reads the whole document.
    pub async fn memory_at(&self, pointer: &str) -> Result<serde_json::Value, Error> {
        let trimmed = pointer.trim_start_matches('/');
        if trimmed.is_empty() {
            return Ok(self.memory().await?.doc);
        }
        let mut segments = vec!["memory"];
        segments.extend(trimmed.split('/'));
        self.json(Call::get(self.team_url(&segments)?)).await
    }

    /// `PATCH …/memory` with an RFC 7396 merge patch (objects merge, `null` deletes, anything
    /// else replaces); with `if_match`, 412 when the version moved on.
    pub async fn patch_memory(
        &self,
        patch: &serde_json::Value,
        if_match: Option<i64>,
    ) -> Result<Memory, Error> {
        let mut call = Call::new(Method::PATCH, self.team_url(&["memory"])?)
            .json_as(patch, "application/merge-patch+json")?;
        if let Some(version) = if_match {
            call = call.header("if-match", &version.to_string())?;
        }
        self.json(call).await
    }

    /// `PATCH …/memory` with an RFC 6902 JSON Patch: `ops` is a list of `{"op", "path",
    /// "value"?, "from"?}` applied all or none (`replace` an array element, `add` a member,
    /// `remove`, `test`…); a missing parent or a non-container is a 400 naming the operation.
    /// With `if_match`, 412 when the version moved on.
    pub async fn json_patch_memory(
        &self,
        ops: &serde_json::Value,
        if_match: Option<i64>,
    ) -> Result<Memory, Error> {
        let mut call = Call::new(Method::PATCH, self.team_url(&["memory"])?)
            .json_as(ops, "application/json-patch+json")?;
        if let Some(version) = if_match {
            call = call.header("if-match", &version.to_string())?;
        }
        self.json(call).await
    }

    /// `PUT …/memory`: replaces the whole document; with `if_match`, 412 when the version moved
    /// on.
    pub async fn replace_memory(
        &self,
        doc: &serde_json::Value,
        if_match: Option<i64>,
    ) -> Result<Memory, Error> {
        let body = ReplaceMemory { doc: doc.clone() };
        let mut call = Call::new(Method::PUT, self.team_url(&["memory"])?).json(&body)?;
        if let Some(version) = if_match {
            call = call.header("if-match", &version.to_string())?;
        }
        self.json(call).await
    }

    /// `GET …/memory-history`: the most recent changes first (who, when, what).
    pub async fn memory_history(&self, limit: Option<usize>) -> Result<MemoryHistory, Error> {
        let call = Call::get(self.team_url(&["memory-history"])?).query("limit", limit);
        self.json(call).await
    }
}
