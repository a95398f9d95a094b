//! Shared memory over HTTP: read whole or by JSON Pointer, merge-patch or JSON Patch, replace,
//! history.

use super::authz::{act, Can};
use super::error::{ApiError, ApiResult};
use super::extract::{parse_json, ApiJson, ApiQuery, Body, IfMatch};
use super::openapi_types::*;
use super::AppState;
use crate::store::Caller;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;
use huddle_wire::history::MemoryHistory;
use huddle_wire::{Memory, ReplaceMemory};
use serde::Deserialize;
use utoipa::IntoParams;

fn memory_response(memory: Memory) -> Response {
    let mut headers = HeaderMap::new();
    if let Ok(v) = HeaderValue::from_str(&format!("\"{}\"", memory.version)) {
        headers.insert(header::ETAG, v);
    }
    (headers, Json(memory)).into_response()
}

/// The whole shared document and its version.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/memory",
    operation_id = "getMemory",
    tag = "memory",
    params(TeamPath),
    responses(
        (status = 200, description = "The document", body = Memory,
            headers(("ETag" = String, description = "The document's version, for `If-Match`"))),
        ReadErrors,
    )
)]
pub async fn get(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadMemory>,
) -> ApiResult<Response> {
    Ok(memory_response(read_memory(&state, &caller).await?))
}

/// The caller's team's shared document (HTTP and MCP).
pub async fn read_memory(state: &AppState, caller: &Caller) -> ApiResult<Memory> {
    Ok(state.store.get_memory(caller.team_id).await?)
}

/// `GET /memory/test_strategy/test_framework` reads the value at that JSON Pointer.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/memory/{pointer}",
    operation_id = "getMemoryValue",
    tag = "memory",
    params(PointerPath),
    responses(
        (status = 200, description = "The value at the pointer: any JSON",
            body = serde_json::Value),
        ReadErrors,
    )
)]
pub async fn get_pointer(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadMemory>,
    Path((_, pointer)): Path<(String, String)>,
) -> ApiResult<Json<serde_json::Value>> {
    read_memory_value(&state, &caller, &pointer).await.map(Json)
}

/// The value at a JSON Pointer (with or without its leading `/`) in the caller's team's shared
/// memory (HTTP and MCP).
pub async fn read_memory_value(
    state: &AppState,
    caller: &Caller,
    pointer: &str,
) -> ApiResult<serde_json::Value> {
    memory_value(&read_memory(state, caller).await?, pointer)
}

fn memory_value(memory: &Memory, pointer: &str) -> ApiResult<serde_json::Value> {
    let pointer = format!("/{}", pointer.trim_start_matches('/'));
    memory
        .doc
        .pointer(&pointer)
        .cloned()
        .ok_or_else(|| ApiError::not_found(format!("nothing at {pointer} in the shared memory")))
}

/// RFC 7396 merge patch (objects merge, `null` deletes, anything else replaces), or with
/// `Content-Type: application/json-patch+json` an RFC 6902 JSON Patch: a list of operations
/// (`add`, `remove`, `replace`, `move`, `copy`, `test`) applied all or none, which can set an
/// array element, store `null`, and refuses a missing parent or a non-container. Each operation
/// is judged before it runs: one whose result would pass the size limit (413) or the depth
/// limit (400) is refused, naming it, and nothing is stored.
#[utoipa::path(
    patch,
    path = "/v1/teams/{team}/memory",
    operation_id = "patchMemory",
    tag = "memory",
    params(TeamPath, IfMatchHeader),
    request_body(
        description = "An RFC 7396 merge patch, or an RFC 6902 JSON Patch",
        content(
            (serde_json::Value = "application/merge-patch+json"),
            (Vec<serde_json::Value> = "application/json-patch+json"),
        )
    ),
    responses(
        (status = 200, description = "The patched document", body = Memory,
            headers(("ETag" = String, description = "The document's version, for `If-Match`"))),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 412, response = StaleVersion),
        (status = 413, response = TooLarge),
        (status = 429, response = TooManyRequests),
        (status = 500, response = Internal),
        (status = 503, response = Unavailable),
    )
)]
pub async fn patch(
    State(state): State<AppState>,
    Can(caller, _): Can<act::PatchMemory>,
    IfMatch(if_match): IfMatch,
    headers: HeaderMap,
    Body(body): Body,
) -> ApiResult<Response> {
    let patch: serde_json::Value = parse_json(&body)?;
    let json_patch = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.trim_start().starts_with("application/json-patch+json"));
    Ok(memory_response(
        patch_memory(&state, &caller, patch, json_patch, if_match).await?,
    ))
}

/// Applies a merge patch, or a JSON Patch when `json_patch` (HTTP and MCP).
pub async fn patch_memory(
    state: &AppState,
    caller: &Caller,
    patch: serde_json::Value,
    json_patch: bool,
    if_match: Option<i64>,
) -> ApiResult<Memory> {
    Ok(if json_patch {
        state
            .store
            .json_patch_memory(caller, patch, if_match)
            .await?
    } else {
        state.store.patch_memory(caller, patch, if_match).await?
    })
}

/// Replaces the whole document (coordinators only).
#[utoipa::path(
    put,
    path = "/v1/teams/{team}/memory",
    operation_id = "replaceMemory",
    tag = "memory",
    params(TeamPath, IfMatchHeader),
    request_body = ReplaceMemory,
    responses(
        (status = 200, description = "The new document", body = Memory,
            headers(("ETag" = String, description = "The document's version, for `If-Match`"))),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 412, response = StaleVersion),
        (status = 413, response = TooLarge),
        (status = 429, response = TooManyRequests),
        (status = 500, response = Internal),
        (status = 503, response = Unavailable),
    )
)]
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

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct HistoryQuery {
    /// How many changes (100 by default).
    limit: Option<usize>,
    /// Only changes before this version (the `next` of the previous page).
    before: Option<i64>,
}

/// The most recent changes first: who, when, and the patch or document they sent. A page
/// holds at most `limit` changes and at most `[limits] max_page_bytes` of them (a single
/// larger change comes alone), so a history of large documents comes in shorter pages;
/// `next`, when present, is the `before` of the following page.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/memory-history",
    operation_id = "memoryHistory",
    tag = "memory",
    params(TeamPath, HistoryQuery),
    responses(
        (status = 200, description = "The changes, newest first", body = MemoryHistory),
        QueryErrors,
    )
)]
pub async fn history(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadMemory>,
    ApiQuery(q): ApiQuery<HistoryQuery>,
) -> ApiResult<Json<MemoryHistory>> {
    let limit = super::messages::page_size(&state, q.limit)?;
    let max_bytes = state.settings.limits.max_page_bytes;
    let page = state
        .store
        .memory_history(caller.team_id, q.before, limit, max_bytes)
        .await?;
    let next = (page.cut || page.items.len() == limit)
        .then(|| page.items.last().map(|c| c.version))
        .flatten();
    Ok(Json(MemoryHistory {
        changes: page.items,
        next,
    }))
}
