//! `GET …/tasks/{id}/events`: one task's history of changes, for the dashboard's task detail
//! (created, claimed, expired, released, completed, edited), each with the task as it became.

use super::authz::{act, Can};
use super::error::ApiResult;
use super::extract::ApiQuery;
use super::messages::page_size;
use super::openapi_types::*;
use super::AppState;
use axum::extract::{Path, State};
use axum::Json;
use huddle_wire::TaskEvents;
use serde::Deserialize;
use utoipa::IntoParams;

/// At most this many of a task's events are answered, newest first.
const MAX_TASK_EVENTS: usize = 1_000;

#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct TaskEventsQuery {
    /// How many of the newest events (100 by default, at most the page size limit and 1,000).
    pub limit: Option<usize>,
}

/// The task's `task.*` events, newest first; 404 when the task does not exist.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/tasks/{id}/events",
    operation_id = "taskEvents",
    tag = "tasks",
    params(TaskPath, TaskEventsQuery),
    responses(
        (status = 200, description = "The task's events, newest first", body = TaskEvents),
        QueryErrors,
    )
)]
pub async fn task_events(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadTasks>,
    Path((_, id)): Path<(String, String)>,
    ApiQuery(q): ApiQuery<TaskEventsQuery>,
) -> ApiResult<Json<TaskEvents>> {
    let limit = page_size(&state, q.limit)?.min(MAX_TASK_EVENTS);
    state.store.get_task(caller.team_id, &id).await?;
    let events = state.store.task_events(caller.team_id, &id, limit).await?;
    Ok(Json(TaskEvents { events }))
}
