use super::openapi_types::Status;
use super::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde_json::{json, Value};

/// Liveness: the process answers.
#[utoipa::path(
    get,
    path = "/healthz",
    operation_id = "healthz",
    tag = "health",
    security(()),
    responses((status = 200, description = "`{\"status\": \"ok\"}`", body = Status))
)]
pub async fn healthz() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

/// Readiness: the database answers, the writer runs and the store can take writes.
#[utoipa::path(
    get,
    path = "/readyz",
    operation_id = "readyz",
    tag = "health",
    security(()),
    responses(
        (status = 200, description = "`{\"status\": \"ready\"}`", body = Status),
        (status = 503, description = "`{\"status\": \"unavailable\"}` when the database does not \
            answer; `{\"status\": \"read_only\"}` when it answers reads but cannot take writes \
            (a full disk, a read-only file system)", body = Status),
    )
)]
pub async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Value>) {
    let status = match state.store.ping().await {
        Err(e) => {
            tracing::warn!(error = %e, "not ready");
            "unavailable"
        }
        Ok(()) => match state.store.writable().await {
            Err(e) => {
                tracing::warn!(error = %e, "not ready: the store is read-only");
                "read_only"
            }
            Ok(()) => return (StatusCode::OK, Json(json!({ "status": "ready" }))),
        },
    };
    (
        StatusCode::SERVICE_UNAVAILABLE,
        Json(json!({ "status": status })),
    )
}
