//! `GET …/tasks/{id}/why-not-ready`: why a task that looks ready is not handed to a claim
//! (`store::readiness`).

use super::authz::{act, Can};
use super::error::ApiResult;
use super::openapi_types::*;
use super::AppState;
use crate::store::readiness;
use crate::store::StoreError;
use axum::extract::{Path, State};
use axum::Json;
use huddle_wire::{TaskStatus, WhyNotReady};

/// The reasons a claim would not take the task now: not pending, `blockedBy` tasks not
/// completed, questions for a person not answered, or a file scope (metadata `scope`) that
/// overlaps a task in progress (named, with its holder and the two globs). Empty when a claim
/// could take it.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/tasks/{id}/why-not-ready",
    operation_id = "whyNotReady",
    tag = "tasks",
    params(TaskPath),
    responses(
        (status = 200, description = "The task's reasons, empty when claimable",
            body = WhyNotReady),
        ReadErrors,
    )
)]
pub async fn why_not_ready(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadTasks>,
    Path((_, id)): Path<(String, String)>,
) -> ApiResult<Json<WhyNotReady>> {
    Ok(Json(reasons(&state, caller.team_id, &id).await?))
}

/// The reasons task `id` is not claimable (HTTP and MCP). Reads the task, each of its
/// blockers (at most `[limits] max_blocked_by`) and, for a pending task with a scope, the
/// scopes in progress: a question asked by hand, not a hot path.
pub async fn reasons(state: &AppState, team_id: i64, id: &str) -> ApiResult<WhyNotReady> {
    let task = state.store.get_task(team_id, id).await?;
    let mut blockers = Vec::with_capacity(task.blocked_by.len());
    if task.status == TaskStatus::Pending {
        for blocker in &task.blocked_by {
            match state.store.get_task(team_id, blocker).await {
                Ok(b) => blockers.push((b.id, b.status)),
                // Deleted since (retention): it no longer holds anything back.
                Err(StoreError::NotFound { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    let scoped =
        crate::store::rules::scope::of_value(&task.metadata).is_some_and(|g| !g.is_empty());
    let held = match task.status == TaskStatus::Pending && scoped {
        true => state.store.scope_held(team_id).await?,
        false => Vec::new(),
    };
    Ok(WhyNotReady {
        reasons: readiness::why_not_ready(&task, &blockers, &held),
        id: task.id,
    })
}
