//! Creating, listing, reading and editing tasks.

use super::authz::{act, Can};
use super::error::{ApiError, ApiResult};
use super::extract::{parse_json, ApiJson, ApiQuery, Body, IfMatch};
use super::openapi_types::*;
use super::AppState;
use crate::store::rules::validate;
use crate::store::{Caller, TaskFilter};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use huddle_wire::{NewTask, NewTasks, Task, TaskList, TaskPatch, TaskStatus};
use serde::Deserialize;
use utoipa::IntoParams;

/// A task with its version as `ETag`, ready for a later `If-Match`.
pub fn task_response(status: StatusCode, task: Task) -> Response {
    let mut headers = HeaderMap::new();
    if let Ok(v) = HeaderValue::from_str(&format!("\"{}\"", task.version)) {
        headers.insert(header::ETAG, v);
    }
    (status, headers, Json(task)).into_response()
}

/// One task object answers with one task; an array answers with an array (all or none).
#[utoipa::path(
    post,
    path = "/v1/teams/{team}/tasks",
    operation_id = "createTasks",
    tag = "tasks",
    params(TeamPath),
    request_body = NewTasks,
    responses(
        (status = 201, description = "The task (`ETag` = its version), or the array of tasks",
            body = CreatedTasks,
            headers(("ETag" = String, description = "The task's version, for a single task"))),
        WriteErrors,
    )
)]
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
    // Each task is an object: serde would also read one from an array, field by field.
    if let Some(i) = input
        .as_array()
        .and_then(|tasks| tasks.iter().position(|t| !t.is_object()))
    {
        return Err(ApiError::bad_request(
            &format!("[{i}]"),
            format!("[{i}]: each task must be a JSON object"),
        ));
    }
    let tasks = match parse_json::<NewTasks>(body) {
        Ok(NewTasks::Many(tasks)) => tasks,
        Ok(NewTasks::One(task)) => vec![*task],
        // The untagged enum hides the real problem; parse again as the intended shape to name it.
        Err(_) if batch => parse_json::<Vec<NewTask>>(body)?,
        Err(_) if input.is_object() => vec![parse_json::<NewTask>(body)?],
        Err(_) => {
            return Err(ApiError::bad_request(
                "",
                "the body must be a task object or an array of tasks",
            ))
        }
    };
    let created = create_tasks(&state, &caller, tasks).await?;
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

/// Creates tasks, all or none, within the request's `blockedBy` edge cap (HTTP and MCP).
pub async fn create_tasks(
    state: &AppState,
    caller: &Caller,
    tasks: Vec<NewTask>,
) -> ApiResult<Vec<Task>> {
    let started = std::time::SystemTime::now();
    let edges = tasks.iter().map(|t| t.blocked_by.len()).sum();
    validate::blocked_by_edges("blockedBy", edges, &state.settings.limits)?;
    let created = state.store.create_tasks(caller, tasks).await?;
    super::task_traces::created(caller, &created, started);
    Ok(created)
}

/// The filters of a task list: the query string of `GET /tasks` and the MCP `task_list` input.
#[derive(Debug, Default, Deserialize, IntoParams, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Only tasks in this status (`pending`, `in_progress`, `completed`, `failed`, `cancelled`;
    /// empty for any).
    #[param(pattern = "^(pending|in_progress|completed|failed|cancelled)?$")]
    pub status: Option<String>,
    /// Only tasks with this owner (an agent name or a role).
    pub owner: Option<String>,
    /// Only tasks whose id has this prefix (`TEST`; empty for any).
    #[param(pattern = "^([A-Z][A-Z0-9_]{0,31}-?)?$")]
    pub prefix: Option<String>,
    /// Only pending tasks whose blockers are all completed.
    pub ready: Option<bool>,
    /// Only tasks claimed by this agent (its current claims with `status=in_progress`; a
    /// finished task keeps its last holder).
    #[serde(rename = "claimedBy")]
    #[param(rename = "claimedBy")]
    pub claimed_by: Option<String>,
    /// Page size (100 by default); a page also stops before `[limits] max_page_bytes`.
    pub limit: Option<usize>,
    /// The `next` of the previous page (a task id; empty for the first page).
    #[param(pattern = "^([A-Z][A-Z0-9_]{0,31}-[0-9]{1,9})?$")]
    pub after: Option<String>,
}

/// A page of tasks in id order; `next` is the `after` of the following page. A page holds at
/// most `limit` tasks and at most `[limits] max_page_bytes` of them (a `result` may hold a
/// diff; a single larger task comes alone), so it may be shorter, with `next`.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/tasks",
    operation_id = "listTasks",
    tag = "tasks",
    params(TeamPath, ListQuery),
    responses(
        (status = 200, description = "A page of tasks", body = TaskList),
        QueryErrors,
    )
)]
pub async fn list(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadTasks>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<Json<TaskList>> {
    list_tasks(&state, &caller, q).await.map(Json)
}

/// A page of the caller's team's tasks (HTTP and MCP).
pub async fn list_tasks(state: &AppState, caller: &Caller, q: ListQuery) -> ApiResult<TaskList> {
    let status = match q.status.as_deref() {
        None | Some("") => None,
        Some(s) => Some(TaskStatus::parse(s).ok_or_else(|| {
            ApiError::bad_request("status", format!("unknown status {s:?}; use pending, in_progress, completed, failed or cancelled"))
        })?),
    };
    let limit = super::messages::page_size(state, q.limit)?;
    let filter = TaskFilter {
        status,
        owner: q.owner.filter(|o| !o.is_empty()),
        prefix: q.prefix.filter(|p| !p.is_empty()),
        ready: q.ready.unwrap_or(false),
        limit,
        after: q.after.filter(|a| !a.is_empty()),
        claimed_by: q.claimed_by.filter(|a| !a.is_empty()),
        max_bytes: Some(state.settings.limits.max_page_bytes),
    };
    let page = state.store.list_tasks(caller.team_id, filter).await?;
    Ok(TaskList {
        tasks: page.items,
        next: page.next,
    })
}

#[utoipa::path(
    get,
    path = "/v1/teams/{team}/tasks/{id}",
    operation_id = "getTask",
    tag = "tasks",
    params(TaskPath),
    responses(
        (status = 200, description = "The task", body = Task,
            headers(("ETag" = String, description = "The task's version, for `If-Match`"))),
        ReadErrors,
    )
)]
pub async fn get(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadTasks>,
    Path((_, id)): Path<(String, String)>,
) -> ApiResult<Response> {
    Ok(task_response(
        StatusCode::OK,
        super::gate_records::read_task(&state, caller.team_id, &id).await?,
    ))
}

/// Edits a task; absent fields stay, `metadata` is merged, `owner: null` clears the owner.
#[utoipa::path(
    patch,
    path = "/v1/teams/{team}/tasks/{id}",
    operation_id = "updateTask",
    tag = "tasks",
    params(TaskPath, IfMatchHeader),
    request_body(content = Option<TaskPatch>, description = "May be empty: changes nothing"),
    responses(
        (status = 200, description = "The task", body = Task,
            headers(("ETag" = String, description = "The task's new version"))),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 409, response = Conflict),
        (status = 412, response = StaleVersion),
        (status = 413, response = TooLarge),
        (status = 429, response = TooManyRequests),
        (status = 500, response = Internal),
        (status = 503, response = Unavailable),
    )
)]
pub async fn update(
    State(state): State<AppState>,
    Can(caller, _): Can<act::EditTasks>,
    Path((_, id)): Path<(String, String)>,
    IfMatch(if_match): IfMatch,
    ApiJson(patch): ApiJson<TaskPatch>,
) -> ApiResult<Response> {
    super::name_task(&id);
    Ok(task_response(
        StatusCode::OK,
        update_task(&state, &caller, &id, patch, if_match).await?,
    ))
}

/// Edits task `id`, within the request's `blockedBy` edge cap (HTTP and MCP).
pub async fn update_task(
    state: &AppState,
    caller: &Caller,
    id: &str,
    patch: TaskPatch,
    if_match: Option<i64>,
) -> ApiResult<Task> {
    let edges = patch.add_blocked_by.len();
    validate::blocked_by_edges("addBlockedBy", edges, &state.settings.limits)?;
    Ok(state.store.update_task(caller, id, patch, if_match).await?)
}
