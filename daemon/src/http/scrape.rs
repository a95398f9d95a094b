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
    let text = render(state).await;
    ([(header::CONTENT_TYPE, TEXT_FORMAT)], text).into_response()
}

/// The text exposition, with the task gauges read from the store first.
async fn render(state: &AppState) -> String {
    let teams = state.store.list_teams().await;
    let counts = state.store.task_counts().await;
    match (teams, counts) {
        (Ok(teams), Ok(counts)) => {
            for team in teams {
                for status in huddle_wire::TaskStatus::ALL {
                    let n = counts
                        .iter()
                        .find(|(t, s, _)| *t == team.name && *s == status)
                        .map_or(0, |c| c.2);
                    let labels = [("team", team.name.clone()), ("status", status.to_string())];
                    metrics::gauge!("huddle_tasks", &labels).set(n as f64);
                }
            }
        }
        (Err(e), _) | (_, Err(e)) => tracing::warn!(error = %e, "task counts for /metrics"),
    }
    crate::metrics::handle().render()
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
