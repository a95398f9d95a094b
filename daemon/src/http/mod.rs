//! The HTTP surface (DESIGN §3): one file per area, one error type ([`error::ApiError`]), and
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
pub mod serve;
mod streams;
mod task_claims;
mod tasks;
mod teams;

use crate::config::Settings;
use crate::hub::Hub;
use crate::store::Store;
pub use auth_cache::AuthCache;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::Router;
use error::ApiError;
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
    /// Per-token request rate.
    pub rate: Arc<limits::RequestRate>,
    /// Open streams per agent.
    pub streams: Arc<limits::StreamSlots>,
    /// Cancelled on shutdown: ends SSE streams and long polls so in-flight requests can finish.
    pub shutdown: CancellationToken,
}

/// The whole API as a router, so tests can drive it in process with `oneshot`.
pub fn app(state: AppState) -> Router {
    let body_limit = state.settings.server.max_body_bytes;
    let team = Router::new()
        .route("/agents", post(teams::create_agent).get(teams::list_agents))
        .route("/agents/{name}/revoke", post(teams::revoke_agent))
        .route("/agents/{name}/rotate", post(teams::rotate_agent))
        .route("/tasks", post(tasks::create).get(tasks::list))
        .route("/tasks/claim", post(task_claims::claim))
        .route("/tasks/complete", post(task_claims::complete_many))
        .route("/tasks/{id}", get(tasks::get).patch(tasks::update))
        .route("/tasks/{id}/heartbeat", post(task_claims::heartbeat))
        .route("/tasks/{id}/complete", post(task_claims::complete))
        .route("/tasks/{id}/fail", post(task_claims::fail))
        .route("/tasks/{id}/release", post(task_claims::release))
        .route("/messages", post(messages::post).get(messages::list))
        .route("/messages/batch", post(messages::post_many))
        .route("/messages/stream", get(streams::messages))
        .route("/inbox", get(messages::inbox))
        .route("/inbox/ack", post(messages::ack))
        .route(
            "/memory",
            get(memory::get).patch(memory::patch).put(memory::replace),
        )
        .route("/memory/{*pointer}", get(memory::get_pointer))
        .route("/memory-history", get(memory::history))
        .route("/events", get(streams::events));
    Router::new()
        .route("/v1/teams", post(teams::create_team))
        .nest("/v1/teams/{team}", team)
        .route("/", get(dashboard::index))
        .route("/dashboard/{asset}", get(dashboard::asset))
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/openapi.json", get(openapi::openapi_json))
        .fallback(|| async {
            ApiError::not_found("no such route; the API lives under /v1/teams (see the README)")
        })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                axum::http::StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "this route does not take that method",
            )
        })
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .with_state(state)
}
