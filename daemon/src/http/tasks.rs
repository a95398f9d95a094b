//! Creating, listing, reading and editing tasks.

use super::authz::{act, Can};
use super::error::{ApiError, ApiResult};
use super::extract::{parse_json, ApiJson, ApiQuery, Body, IfMatch};
use super::AppState;
use crate::store::TaskFilter;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use huddle_sdk::wire::{NewTasks, Task, TaskList, TaskPatch, TaskStatus};
use serde::Deserialize;

/// A task with its version as `ETag`, ready for a later `If-Match`.
pub fn task_response(status: StatusCode, task: Task) -> Response {
    let mut headers = HeaderMap::new();
    if let Ok(v) = HeaderValue::from_str(&format!("\"{}\"", task.version)) {
        headers.insert(header::ETAG, v);
    }
    (status, headers, Json(task)).into_response()
}

/// One task object answers with one task; an array answers with an array (all or none).
#[tracing::instrument(skip_all, fields(agent = %caller.agent))]
pub async fn create(
    State(state): State<AppState>,
    Can(caller, _): Can<act::CreateTasks>,
    Body(body): Body,
) -> ApiResult<Response> {
    let body: &[u8] = if body.iter().all(u8::is_ascii_whitespace) {
        b"null"
    } else {
        &body
    };
    let input: serde_json::Value = parse_json(body)?;
    let batch = input.is_array();
    let tasks = match parse_json::<NewTasks>(body) {
        Ok(NewTasks::Many(tasks)) => tasks,
        Ok(NewTasks::One(task)) => vec![*task],
        // The untagged enum hides the real problem; parse again as the intended shape to name it.
        Err(_) if batch => parse_json::<Vec<huddle_sdk::wire::NewTask>>(body)?,
        Err(_) if input.is_object() => vec![parse_json::<huddle_sdk::wire::NewTask>(body)?],
        Err(_) => {
            return Err(ApiError::bad_request(
                "",
                "the body must be a task object or an array of tasks",
            ))
        }
    };
    let created = state.store.create_tasks(&caller, tasks).await?;
    if batch {
        Ok((StatusCode::CREATED, Json(created)).into_response())
    } else {
        let task = created
            .into_iter()
            .next()
            .ok_or_else(|| ApiError::bad_request("", "no task created"))?;
        Ok(task_response(StatusCode::CREATED, task))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    status: Option<String>,
    owner: Option<String>,
    prefix: Option<String>,
    ready: Option<bool>,
    limit: Option<usize>,
    after: Option<String>,
}

pub async fn list(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadTasks>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<Json<TaskList>> {
    let status = match q.status.as_deref() {
        None | Some("") => None,
        Some(s) => Some(TaskStatus::parse(s).ok_or_else(|| {
            ApiError::bad_request("status", format!("unknown status {s:?}; use pending, in_progress, completed, failed or cancelled"))
        })?),
    };
    let limit = super::messages::page_size(&state, q.limit)?;
    let filter = TaskFilter {
        status,
        owner: q.owner.filter(|o| !o.is_empty()),
        prefix: q.prefix.filter(|p| !p.is_empty()),
        ready: q.ready.unwrap_or(false),
        limit,
        after: q.after.filter(|a| !a.is_empty()),
    };
    let page = state.store.list_tasks(caller.team_id, filter).await?;
    Ok(Json(TaskList {
        tasks: page.items,
        next: page.next,
    }))
}

pub async fn get(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadTasks>,
    Path((_, id)): Path<(String, String)>,
) -> ApiResult<Response> {
    Ok(task_response(
        StatusCode::OK,
        state.store.get_task(caller.team_id, &id).await?,
    ))
}

#[tracing::instrument(skip_all, fields(agent = %caller.agent, task = %id))]
pub async fn update(
    State(state): State<AppState>,
    Can(caller, _): Can<act::EditTasks>,
    Path((_, id)): Path<(String, String)>,
    IfMatch(if_match): IfMatch,
    ApiJson(patch): ApiJson<TaskPatch>,
) -> ApiResult<Response> {
    Ok(task_response(
        StatusCode::OK,
        state
            .store
            .update_task(&caller, &id, patch, if_match)
            .await?,
    ))
}
