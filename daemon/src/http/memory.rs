//! Shared memory over HTTP: read whole or by JSON Pointer, merge-patch, replace, history.

use super::authz::{act, Can};
use super::error::{ApiError, ApiResult};
use super::extract::{parse_json, ApiJson, ApiQuery, Body, IfMatch};
use super::AppState;
use crate::store::MemoryChange;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;
use huddle_sdk::wire::{Memory, ReplaceMemory};
use serde::Deserialize;

fn memory_response(memory: Memory) -> Response {
    let mut headers = HeaderMap::new();
    if let Ok(v) = HeaderValue::from_str(&format!("\"{}\"", memory.version)) {
        headers.insert(header::ETAG, v);
    }
    (headers, Json(memory)).into_response()
}

pub async fn get(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadMemory>,
) -> ApiResult<Response> {
    Ok(memory_response(
        state.store.get_memory(caller.team_id).await?,
    ))
}

/// `GET /memory/test_strategy/test_framework` reads the value at that JSON Pointer.
pub async fn get_pointer(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadMemory>,
    Path((_, pointer)): Path<(String, String)>,
) -> ApiResult<Json<serde_json::Value>> {
    let memory = state.store.get_memory(caller.team_id).await?;
    let pointer = format!("/{}", pointer.trim_start_matches('/'));
    memory
        .doc
        .pointer(&pointer)
        .cloned()
        .map(Json)
        .ok_or_else(|| ApiError::not_found(format!("nothing at {pointer} in the shared memory")))
}

/// RFC 7396 merge patch: objects merge, `null` deletes, anything else replaces.
#[tracing::instrument(skip_all, fields(agent = %caller.agent))]
pub async fn patch(
    State(state): State<AppState>,
    Can(caller, _): Can<act::PatchMemory>,
    IfMatch(if_match): IfMatch,
    Body(body): Body,
) -> ApiResult<Response> {
    let patch: serde_json::Value = parse_json(&body)?;
    Ok(memory_response(
        state.store.patch_memory(&caller, patch, if_match).await?,
    ))
}

#[tracing::instrument(skip_all, fields(agent = %caller.agent))]
pub async fn replace(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReplaceMemory>,
    IfMatch(if_match): IfMatch,
    ApiJson(body): ApiJson<ReplaceMemory>,
) -> ApiResult<Response> {
    Ok(memory_response(
        state
            .store
            .replace_memory(&caller, body.doc, if_match)
            .await?,
    ))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryQuery {
    limit: Option<usize>,
}

/// The most recent changes first: who, when, and the patch or document they sent.
pub async fn history(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadMemory>,
    ApiQuery(q): ApiQuery<HistoryQuery>,
) -> ApiResult<Json<serde_json::Value>> {
    let changes: Vec<MemoryChange> = state
        .store
        .memory_history(caller.team_id, q.limit.unwrap_or(100))
        .await?;
    Ok(Json(serde_json::json!({ "changes": changes })))
}
