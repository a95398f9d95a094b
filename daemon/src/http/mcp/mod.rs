//! `/mcp`: the API as Model Context Protocol tools, for agents whose native interface is MCP
//! (Claude Code and others), over rmcp's streamable HTTP transport.
//!
//! The transport runs stateless (no `Mcp-Session-Id`; every POST stands alone) and answers plain
//! JSON, so each request goes through [`authenticate`] exactly as an API request does: the bearer
//! token resolved by [`Principal`] (with the per-token rate), a missing or unknown token refused
//! with 401 before any MCP is spoken, the admin token with 403. The resolved [`Caller`] rides in
//! the request's extensions, which rmcp hands to the tool (`tools.rs`). Each tool calls the
//! function its HTTP handler calls, where that operation's input rules and limits live
//! (`operations.rs` lists them, and its tests keep the list whole); an [`ApiError`] comes back
//! as a tool error (`isError`) whose structured content is the API's error body.

mod args;
mod compact_tasks;
mod gate_tools;
mod in_flight;
mod lease_renewal;
mod memory_tools;
#[cfg(test)]
mod operations;
mod outputs;
mod prompts;
mod readiness_tools;
mod schemas;
mod search_tools;
mod spend_tools;
mod team_msg;
mod team_tools;
mod tool_access;
mod tools;

use super::error::ApiError;
use super::identity::Principal;
use super::AppState;
use crate::store::Caller;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use huddle_wire::{ErrorBody, ErrorInfo};
use in_flight::{Departed, InFlight};
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde::Serialize;
use std::sync::Arc;

/// What the `/mcp` middleware needs: the API's state and the tool calls in flight.
#[derive(Clone)]
struct McpState {
    app: AppState,
    in_flight: Arc<InFlight>,
}

/// The `/mcp` route, authenticated like the API.
pub fn router(state: &AppState) -> Router<AppState> {
    let tools = tools::Huddle::new(state.clone());
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_max_request_body_bytes(state.settings.server.max_body_bytes)
        .with_cancellation_token(state.shutdown.child_token())
        // The Host check guards servers that trust the network position of a browser (DNS
        // rebinding); every call here carries a bearer token a rebound page does not have, and
        // the daemon may listen on any address.
        .disable_allowed_hosts();
    let service = StreamableHttpService::new(
        move || Ok(tools.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(
            McpState {
                app: state.clone(),
                in_flight: Arc::default(),
            },
            authenticate,
        ))
}

/// Resolves the bearer token as the API does and hands the agent to the tools; reads the
/// JSON-RPC message first, so that invalid JSON is answered as JSON-RPC, a `tools/call` is
/// registered as in flight (its [`Departed`] token fires if the client leaves before the answer)
/// and a `notifications/cancelled` cancels the caller's call it names.
async fn authenticate(State(mcp): State<McpState>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let caller = match Principal::from_request_parts(&mut parts, &mcp.app).await {
        Ok(Principal::Agent(caller)) => caller,
        Ok(Principal::Admin) => {
            return ApiError::forbidden(
                "the admin token manages teams and agents; use an agent token for MCP",
            )
            .into_response()
        }
        Err(e) => return e.into_response(),
    };
    if parts.method != axum::http::Method::POST {
        parts.extensions.insert(caller);
        return as_json_rpc(next.run(Request::from_parts(parts, body)).await).await;
    }
    let limit = mcp.app.settings.server.max_body_bytes;
    let Ok(bytes) = axum::body::to_bytes(body, limit).await else {
        let message = format!("the request body is larger than {limit} bytes");
        return jsonrpc_error(StatusCode::PAYLOAD_TOO_LARGE, -32600, message);
    };
    let message: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(message) => message,
        Err(e) => {
            return jsonrpc_error(StatusCode::BAD_REQUEST, -32700, format!("parse error: {e}"))
        }
    };
    let method = message.get("method").and_then(|m| m.as_str());
    let mut call = None;
    match (method, message.get("id")) {
        (Some("tools/call"), Some(id)) => {
            let guard = mcp.in_flight.register(&caller, id);
            parts.extensions.insert(guard.departed());
            call = Some(guard);
        }
        (Some("notifications/cancelled"), _) => {
            if let Some(id) = message.pointer("/params/requestId") {
                mcp.in_flight.cancel(&caller, id);
            }
        }
        _ => {}
    }
    parts.extensions.insert(caller);
    let response = next
        .run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await;
    if let Some(call) = call {
        call.answered();
    }
    as_json_rpc(response).await
}

/// The transport answers its own refusals (a wrong `Accept` or `Content-Type`, a message that
/// is not JSON-RPC, a method it does not serve) in plain text; clients parse JSON-RPC. Such an
/// answer becomes a JSON-RPC "invalid request" carrying the text, with the same status.
async fn as_json_rpc(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 64 * 1024)
        .await
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&text).trim().to_string();
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("refused").to_string()
    } else {
        text
    };
    let mut answer = jsonrpc_error(status, -32600, message);
    if let Some(allow) = parts.headers.get(axum::http::header::ALLOW) {
        answer
            .headers_mut()
            .insert(axum::http::header::ALLOW, allow.clone());
    }
    answer
}

/// A transport-level refusal as a JSON-RPC error without an id, as the MCP transport allows.
fn jsonrpc_error(status: StatusCode, code: i64, message: String) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": code, "message": message },
    });
    (status, axum::Json(body)).into_response()
}

/// The token that fires when the client of this tool call has left (see [`in_flight`]).
fn departed(parts: &axum::http::request::Parts) -> tokio_util::sync::CancellationToken {
    parts
        .extensions
        .get::<Departed>()
        .map(|d| d.0.clone())
        .unwrap_or_default()
}

/// The agent [`authenticate`] put in the request's extensions.
fn caller(parts: &axum::http::request::Parts) -> Result<Caller, rmcp::ErrorData> {
    parts
        .extensions
        .get::<Caller>()
        .cloned()
        .ok_or_else(|| rmcp::ErrorData::internal_error("request without a resolved caller", None))
}

/// A tool's answer: the value as structured content (an object, as MCP wants) and as JSON text;
/// an [`ApiError`] as a tool error carrying the API's error body.
fn answer<T: Serialize>(result: Result<T, ApiError>) -> Result<CallToolResult, rmcp::ErrorData> {
    match result {
        Ok(value) => {
            let value = serde_json::to_value(value)
                .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))?;
            Ok(CallToolResult::structured(value))
        }
        Err(e) => {
            crate::metrics::error_answered(e.code);
            let text = format!("{}: {}", e.code, e.message);
            let body = ErrorBody {
                error: ErrorInfo {
                    code: e.code.to_string(),
                    message: e.message,
                    details: e.details,
                },
            };
            let body = serde_json::to_value(body)
                .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))?;
            let mut result = CallToolResult::structured_error(body);
            result.content = vec![ContentBlock::text(text)];
            Ok(result)
        }
    }
}
