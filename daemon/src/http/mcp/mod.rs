//! `/mcp`: the API as Model Context Protocol tools, for agents whose native interface is MCP
//! (Claude Code and others), over rmcp's streamable HTTP transport.
//!
//! The transport runs stateless (no `Mcp-Session-Id`; every POST stands alone) and answers plain
//! JSON, so each request goes through [`authenticate`] exactly as an API request does: the bearer
//! token resolved by [`Principal`] (with the per-token rate), a missing or unknown token refused
//! with 401 before any MCP is spoken, the admin token with 403. The resolved [`Caller`] rides in
//! the request's extensions, which rmcp hands to the tool (`tools.rs`). Tools call the same
//! functions as the HTTP handlers; an [`ApiError`] comes back as a tool error (`isError`) whose
//! structured content is the API's error body.

mod args;
mod tools;

use super::error::ApiError;
use super::identity::Principal;
use super::AppState;
use crate::store::Caller;
use axum::extract::{FromRequestParts, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use huddle_wire::{ErrorBody, ErrorInfo};
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde::Serialize;
use std::sync::Arc;

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
            state.clone(),
            authenticate,
        ))
}

/// Resolves the bearer token as the API does and hands the agent to the tools.
async fn authenticate(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    match Principal::from_request_parts(&mut parts, &state).await {
        Ok(Principal::Agent(caller)) => {
            parts.extensions.insert(caller);
            next.run(Request::from_parts(parts, body)).await
        }
        Ok(Principal::Admin) => ApiError::forbidden(
            "the admin token manages teams and agents; use an agent token for MCP",
        )
        .into_response(),
        Err(e) => e.into_response(),
    }
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
