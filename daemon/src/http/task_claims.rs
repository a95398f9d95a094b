//! Claiming work and acting on a claim: heartbeat, complete, fail, release.

use super::authz::{act, Can};
use super::error::{ApiError, ApiResult};
use super::extract::ApiJson;
use super::tasks::task_response;
use super::AppState;
use crate::validate;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use huddle_sdk::wire::{
    ClaimRequest, ClaimedTasks, CompleteTask, CompleteTasks, FailTask, Heartbeat,
};
use std::time::Duration;
use tokio::time::Instant;

fn lease(state: &AppState, requested: Option<u64>) -> ApiResult<u64> {
    let t = &state.settings.tasks;
    let lease = requested.unwrap_or(t.default_lease_ms);
    if lease < t.min_lease_ms || lease > t.max_lease_ms {
        return Err(ApiError::bad_request(
            "leaseMs",
            format!(
                "`leaseMs` must be between {} and {}, got {lease}",
                t.min_lease_ms, t.max_lease_ms
            ),
        ));
    }
    Ok(lease)
}

/// 200 with the task, or 204 when nothing became ready within `waitMs`. Waiting is woken by
/// the hub after any task change in the team, never by polling the database.
#[tracing::instrument(skip_all, fields(agent = %caller.agent))]
pub async fn claim(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ClaimTasks>,
    ApiJson(req): ApiJson<ClaimRequest>,
) -> ApiResult<Response> {
    let prefixes = match req.prefixes {
        Some(p) if !p.is_empty() => p,
        _ => caller
            .role
            .default_prefixes()
            .iter()
            .map(|p| p.to_string())
            .collect(),
    };
    if prefixes.is_empty() {
        return Err(ApiError::bad_request(
            "prefixes",
            format!(
                "a {} claims nothing by default; pass `prefixes`, e.g. [\"TEST\"]",
                caller.role
            ),
        ));
    }
    if prefixes.len() > 32 {
        return Err(ApiError::bad_request("prefixes", "at most 32 prefixes"));
    }
    let prefixes = prefixes
        .iter()
        .map(|p| validate::prefix("prefixes", p))
        .collect::<Result<Vec<_>, _>>()?;
    let lease_ms = lease(&state, req.lease_ms)?;
    let wait_ms = req.wait_ms.unwrap_or(0);
    let max_wait = state.settings.tasks.max_wait_ms;
    if wait_ms > max_wait {
        return Err(ApiError::bad_request(
            "waitMs",
            format!("`waitMs` must be at most {max_wait}, got {wait_ms}"),
        ));
    }
    let max = match req.max {
        None => None,
        Some(m @ 1..=100) => Some(m as usize),
        Some(m) => {
            return Err(ApiError::bad_request(
                "max",
                format!("`max` must be between 1 and 100, got {m}"),
            ))
        }
    };
    let deadline = Instant::now() + Duration::from_millis(wait_ms);
    let mut changed = state.hub.watch_tasks(caller.team_id);
    loop {
        changed.borrow_and_update();
        let mut tasks = state
            .store
            .claim_tasks(&caller, prefixes.clone(), lease_ms, max.unwrap_or(1))
            .await?;
        if !tasks.is_empty() {
            return Ok(match max {
                Some(_) => (StatusCode::OK, axum::Json(ClaimedTasks { tasks })).into_response(),
                None => task_response(StatusCode::OK, tasks.remove(0)),
            });
        }
        tokio::select! {
            r = changed.changed() => if r.is_err() { break },
            _ = tokio::time::sleep_until(deadline) => break,
            _ = state.shutdown.cancelled() => break,
        }
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}

pub async fn heartbeat(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ActOnClaims>,
    Path((_, id)): Path<(String, String)>,
    ApiJson(req): ApiJson<Heartbeat>,
) -> ApiResult<Response> {
    let lease_ms = lease(&state, req.lease_ms)?;
    Ok(task_response(
        StatusCode::OK,
        state.store.heartbeat(&caller, &id, lease_ms).await?,
    ))
}

#[tracing::instrument(skip_all, fields(agent = %caller.agent, task = %id))]
pub async fn complete(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ActOnClaims>,
    Path((_, id)): Path<(String, String)>,
    ApiJson(req): ApiJson<CompleteTask>,
) -> ApiResult<Response> {
    Ok(task_response(
        StatusCode::OK,
        state.store.complete_task(&caller, &id, req.result).await?,
    ))
}

/// Completes several held tasks in one request, all or none; answers `{"tasks": [...]}`.
#[tracing::instrument(skip_all, fields(agent = %caller.agent, count = req.tasks.len()))]
pub async fn complete_many(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ActOnClaims>,
    ApiJson(req): ApiJson<CompleteTasks>,
) -> ApiResult<Response> {
    let max = state.settings.limits.max_batch;
    if req.tasks.is_empty() || req.tasks.len() > max {
        return Err(ApiError::bad_request(
            "tasks",
            format!(
                "`tasks` must hold 1 to {max} items, got {}",
                req.tasks.len()
            ),
        ));
    }
    let items = req.tasks.into_iter().map(|t| (t.id, t.result)).collect();
    let tasks = state.store.complete_tasks(&caller, items).await?;
    Ok((StatusCode::OK, axum::Json(ClaimedTasks { tasks })).into_response())
}

#[tracing::instrument(skip_all, fields(agent = %caller.agent, task = %id))]
pub async fn fail(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ActOnClaims>,
    Path((_, id)): Path<(String, String)>,
    ApiJson(req): ApiJson<FailTask>,
) -> ApiResult<Response> {
    validate::text("reason", &req.reason, state.settings.limits.max_text_chars)?;
    Ok(task_response(
        StatusCode::OK,
        state.store.fail_task(&caller, &id, req.reason).await?,
    ))
}

#[tracing::instrument(skip_all, fields(agent = %caller.agent, task = %id))]
pub async fn release(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ActOnClaims>,
    Path((_, id)): Path<(String, String)>,
    ApiJson(_): ApiJson<serde_json::Map<String, serde_json::Value>>,
) -> ApiResult<Response> {
    Ok(task_response(
        StatusCode::OK,
        state.store.release_task(&caller, &id).await?,
    ))
}
