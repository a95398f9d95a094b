//! Fast failure while the database is unreachable (PostgreSQL's health probe says so): API
//! requests are answered 503 with `Retry-After` at once instead of waiting for a connection,
//! and a request already running when the database goes away is answered 503 then too.
//! Health, metrics and the dashboard's files are not held back.

use super::error::ApiError;
use super::AppState;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use huddle_wire::codes;

/// Seconds a client is told to wait: the probe asks four times a second.
const RETRY_AFTER_SECS: u64 = 1;

pub async fn fail_fast(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let api = path.starts_with("/v1/") || path == "/mcp" || path.starts_with("/mcp/");
    let Some(mut reachable) = state.store.reachability().filter(|_| api) else {
        return next.run(request).await;
    };
    if !*reachable.borrow_and_update() {
        return unreachable().into_response();
    }
    tokio::select! {
        answer = next.run(request) => answer,
        _ = reachable.wait_for(|up| !*up) => unreachable().into_response(),
    }
}

fn unreachable() -> ApiError {
    ApiError::new(
        axum::http::StatusCode::SERVICE_UNAVAILABLE,
        codes::STORE_UNAVAILABLE,
        "the database is unreachable; retry later",
    )
    .with_retry_after(RETRY_AFTER_SECS)
}
