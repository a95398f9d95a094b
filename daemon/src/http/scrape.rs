//! `GET /metrics`: the Prometheus text format (see `crate::metrics`). On the API's address it
//! is the admin token's; on the `[metrics] listen` address it needs no token.

use super::error::{ApiError, ApiResult};
use super::identity::Principal;
use super::AppState;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Router;

const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// On the API's address: the admin token only (an agent token is 403).
pub async fn for_admin(State(state): State<AppState>, who: Principal) -> ApiResult<Response> {
    match who {
        Principal::Admin => Ok(exposition(&state).await),
        Principal::Agent(_) => Err(ApiError::forbidden(
            "/metrics is for the admin token (or set [metrics] listen to serve it apart)",
        )),
    }
}

async fn exposition(state: &AppState) -> Response {
    let text = crate::metrics::render(state).await;
    ([(header::CONTENT_TYPE, TEXT_FORMAT)], text).into_response()
}

/// The router for the `[metrics] listen` address: `/metrics` only, no token.
pub fn separate(state: AppState) -> Router {
    Router::new()
        .route(
            "/metrics",
            axum::routing::get(
                |State(state): State<AppState>| async move { exposition(&state).await },
            ),
        )
        .with_state(state)
}
