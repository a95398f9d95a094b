//! The HTTP surface (docs/ARCHITECTURE.md, "HTTP surface"): one file per area, one error type ([`error::ApiError`]), and
//! extractors ([`extract`]) that resolve the caller and parse input into the API's error shape.

mod auth_cache;
pub mod authz;
mod dashboard;
pub mod error;
pub mod extract;
mod health;
pub mod identity;
pub mod limits;
mod memory;
mod messages;
pub mod openapi;
mod openapi_types;
pub mod routes;
pub mod serve;
mod streams;
mod task_claims;
mod tasks;
mod teams;

use crate::config::Settings;
use crate::hub::Hub;
use crate::store::Store;
pub use auth_cache::{AuthCache, AuthEpoch, Revocation};
use axum::extract::DefaultBodyLimit;
use axum::Router;
use error::ApiError;
use huddle_wire::codes;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Everything a handler needs, cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub store: Arc<dyn Store>,
    pub hub: Arc<Hub>,
    pub settings: Arc<Settings>,
    pub admin_token: Arc<str>,
    /// Resolved bearer tokens, so identity costs no database read per request.
    pub auth: Arc<AuthCache>,
    /// Per-token request rate (valid tokens only, so junk tokens cannot grow it).
    pub rate: Arc<limits::RequestRate>,
    /// Failed authentications per client address.
    pub failed_auth: Arc<limits::FailedAuth>,
    /// Open streams per agent.
    pub streams: Arc<limits::StreamSlots>,
    /// Cancelled on shutdown: ends SSE streams and long polls so in-flight requests can finish.
    pub shutdown: CancellationToken,
}

/// The span every request is logged in: method and path, never the query string (a client may
/// put a token there).
fn request_span(request: &axum::http::Request<axum::body::Body>) -> tracing::Span {
    tracing::debug_span!(
        "request",
        method = %request.method(),
        path = %request.uri().path(),
    )
}

/// The whole API as a router, so tests can drive it in process with `oneshot`.
pub fn app(state: AppState) -> Router {
    let body_limit = state.settings.server.max_body_bytes;
    let (api, _) = routes::api().split_for_parts();
    api
        // The dashboard is for people, not part of the API or its document.
        .route("/", axum::routing::get(dashboard::index))
        .route("/dashboard/{asset}", axum::routing::get(dashboard::asset))
        .fallback(|| async {
            ApiError::not_found("no such route; the API lives under /v1/teams (see the README)")
        })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                axum::http::StatusCode::METHOD_NOT_ALLOWED,
                codes::METHOD_NOT_ALLOWED,
                "this route does not take that method",
            )
        })
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(tower_http::trace::TraceLayer::new_for_http().make_span_with(request_span))
        .layer(axum::middleware::from_fn(serve::limit_head))
        .with_state(state)
}
