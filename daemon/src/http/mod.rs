//! The HTTP surface (docs/ARCHITECTURE.md, "HTTP surface"): one file per area, one error type ([`error::ApiError`]), and
//! extractors ([`extract`]) that resolve the caller and parse input into the API's error shape.

mod address_slots;
mod auth_cache;
pub mod authz;
mod budget;
mod claim_wait;
mod cursors;
mod dashboard;
pub mod error;
pub mod evidence;
mod evidence_start;
pub mod extract;
mod gate_records;
mod gates;
mod health;
mod holder_questions;
pub mod identity;
mod import_checks;
pub mod limits;
mod mcp;
mod me;
mod memory;
pub(crate) mod message_search;
mod messages;
pub mod openapi;
mod openapi_types;
mod outage;
mod request_metrics;
mod request_traces;
pub mod routes;
pub mod scrape;
pub mod serve;
mod spend;
mod sse_frames;
mod streams;
mod task_claims;
mod task_events;
mod task_progress;
mod task_readiness;
mod task_traces;
mod tasks;
mod team_admin;
mod team_export;
mod team_import;
mod team_settings;
mod teams;
pub(crate) mod test_history;
mod webhooks;

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
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;

/// Everything a handler needs. Axum clones the state for every extractor and middleware of
/// every request, so it is one shared allocation: a clone is one counter, not one per field.
#[derive(Clone)]
pub struct AppState(Arc<AppParts>);

impl AppState {
    pub fn new(parts: AppParts) -> AppState {
        AppState(Arc::new(parts))
    }
}

impl std::ops::Deref for AppState {
    type Target = AppParts;

    fn deref(&self) -> &AppParts {
        &self.0
    }
}

/// The parts of [`AppState`].
pub struct AppParts {
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
    /// The replicas sharing the rate and stream limits (`replicas.rs`).
    pub replicas: Arc<crate::replicas::Replicas>,
    /// When each agent was last seen, written to the store once a second.
    pub presence: Arc<crate::presence::Presence>,
    /// Open questions per team, as the deadline sweep last counted them (for `/metrics`).
    pub question_gauges: Arc<crate::gate_deadlines::QuestionGauges>,
    /// Where each held task is worked on, from its heartbeats (for `/metrics`).
    pub workspaces: Arc<crate::workspaces::Workspaces>,
    /// Cancelled on shutdown: ends SSE streams and long polls so in-flight requests can finish.
    pub shutdown: CancellationToken,
}

/// The whole API as a router, so tests can drive it in process with `oneshot`.
pub fn app(state: AppState) -> Router {
    let body_limit = state.settings.server.max_body_bytes;
    let (api, _) = routes::api().split_for_parts();
    let mut api = api
        // Agents' native interface: the same operations as MCP tools (`mcp/`).
        .merge(mcp::router(&state));
    if state.settings.metrics.listen.is_empty() {
        api = api.route("/metrics", axum::routing::get(scrape::for_admin));
    }
    // Per route, as the metrics below; only when traces are exported, so it costs nothing else.
    if huddle_telemetry::enabled() {
        api = api.route_layer(axum::middleware::from_fn(request_traces::record));
    }
    let mut app = api
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
        .layer(DefaultBodyLimit::max(body_limit));
    // Only a store that can become unreachable (PostgreSQL) needs requests failed fast.
    if state.store.reachability().is_some() {
        app = app.layer(axum::middleware::from_fn_with_state(
            state.clone(),
            outage::fail_fast,
        ));
    }
    app
        // Per route, so the matched template (not the raw path) labels the request.
        .layer(axum::middleware::from_fn(request_metrics::track))
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(TraceLayer::new_for_http().make_span_with(request_span))
        // Outermost: every request has an `x-request-id` (the client's, or a new UUID) before
        // its span opens, and the answer carries it back. An oversized head is refused before
        // all of it, by the connection's service (`serve.rs`).
        .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
        .with_state(state)
}

/// A request's span: its id (from `x-request-id`), method, path and, once its token is read, its
/// agent (`identity.rs`), and the task it acts on or its batch's size (`name_task`), on every
/// line logged while it is answered.
fn request_span(request: &axum::http::Request<axum::body::Body>) -> tracing::Span {
    let id = request
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    tracing::info_span!(
        "request",
        request_id = %id,
        method = %request.method(),
        path = %request.uri().path(),
        agent = tracing::field::Empty,
        task = tracing::field::Empty,
        count = tracing::field::Empty,
    )
}

/// Names the task a request acts on on its span, as `identity.rs` names the agent: one span per
/// request, not one more per handler. A batch's handler records its `count` there too.
fn name_task(id: &str) {
    tracing::Span::current().record("task", id);
}
