//! Claiming work and acting on a claim: heartbeat, complete, fail, release.

use super::authz::{act, Can};
use super::claim_wait::{claim_waiting, ClaimPlan};
use super::error::{ApiError, ApiResult};
use super::extract::{parse_batch, ApiJson, Body};
use super::gate_records::with_gates;
use super::openapi_types::*;
use super::tasks::task_response;
use super::{AppState, AuthEpoch};
use crate::store::rules::{project, validate};
use crate::store::Caller;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use huddle_wire::limits::{MAX_CLAIM_BATCH, MAX_CLAIM_PREFIXES};
use huddle_wire::{
    ClaimRequest, ClaimedTasks, CompleteTask, CompleteTasks, FailTask, Heartbeat, PostMessage,
    ReleaseTask, Role, Task,
};
use tokio_util::sync::CancellationToken;

pub fn lease(state: &AppState, requested: Option<u64>) -> ApiResult<u64> {
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

/// 200 with the task, or 204 when nothing became ready within `waitMs`. A waiting claimer is
/// woken by the hub when a task it could take becomes ready, never by polling the database.
/// With `project`, only tasks whose metadata `project` is that name, or that name none
/// (with `strictProject`, only that project's), are taken or wake the claimer.
#[utoipa::path(
    post,
    path = "/v1/teams/{team}/tasks/claim",
    operation_id = "claimTasks",
    tag = "tasks",
    params(TeamPath),
    request_body(content = Option<ClaimRequest>,
        description = "May be empty: the role's default prefixes, no wait"),
    responses(
        (status = 200,
            description = "The claimed task (`ETag` = its version), or `{\"tasks\": […]}` \
                           when `max` was given",
            body = Claimed,
            headers(("ETag" = String, description = "The task's version, for a single task"))),
        (status = 204, description = "Nothing became ready within `waitMs`"),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 413, response = TooLarge),
        (status = 429, response = TooManyRequests),
        (status = 500, response = Internal),
        (status = 503, response = Unavailable),
    )
)]
pub async fn claim(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ClaimTasks>,
    epoch: AuthEpoch,
    ApiJson(req): ApiJson<ClaimRequest>,
) -> ApiResult<Response> {
    let batch = req.max.is_some();
    let max_wait = state.settings.tasks.max_wait_ms;
    // Over HTTP a client that leaves drops this future; `claim_waiting` still releases what a
    // claim in flight took for it.
    let departed = CancellationToken::new();
    let mut tasks = claim_tasks(&state, &caller, epoch, req, max_wait, &departed).await?;
    Ok(match tasks.is_empty() {
        true => StatusCode::NO_CONTENT.into_response(),
        false if batch => (StatusCode::OK, axum::Json(ClaimedTasks { tasks })).into_response(),
        false => task_response(StatusCode::OK, tasks.remove(0)),
    })
}

/// Claims up to `max` (1 by default) ready tasks, waiting up to `waitMs` (at most `max_wait`)
/// for one; empty when nothing became ready in time or the client left (HTTP and MCP).
pub async fn claim_tasks(
    state: &AppState,
    caller: &Caller,
    epoch: AuthEpoch,
    req: ClaimRequest,
    max_wait: u64,
    departed: &CancellationToken,
) -> ApiResult<Vec<Task>> {
    let started = std::time::SystemTime::now();
    let model = req.model.clone();
    if let Some(m) = &model {
        crate::store::rules::spend::check_model("model", m)?;
    }
    let mut plan = claim_plan(state, caller, req, max_wait)?;
    plan.prefixes =
        super::budget::claim_prefixes(state, caller, model.as_deref(), plan.prefixes).await?;
    let claimed = claim_waiting(state, caller, epoch, plan, departed).await?;
    // After the claim, not inside it: answered questions no longer change.
    let mut tasks = Vec::with_capacity(claimed.len());
    for task in claimed {
        // The claim stands either way: a worker that is not told it holds a task loses it.
        match with_gates(state, caller.team_id, task.clone()).await {
            Ok(gated) => tasks.push(gated),
            Err(e) => {
                tracing::warn!(task = %task.id, error = ?e, "claimed, but its gates unread");
                tasks.push(task);
            }
        }
    }
    super::task_traces::claimed(caller, &mut tasks, started);
    Ok(tasks)
}

/// A claim request checked against the limits, with the role's default prefixes filled in.
fn claim_plan(
    state: &AppState,
    caller: &Caller,
    req: ClaimRequest,
    max_wait: u64,
) -> ApiResult<ClaimPlan> {
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
    if prefixes.len() > MAX_CLAIM_PREFIXES {
        return Err(ApiError::bad_request(
            "prefixes",
            format!("at most {MAX_CLAIM_PREFIXES} prefixes"),
        ));
    }
    let prefixes = prefixes
        .iter()
        .map(|p| validate::prefix("prefixes", p))
        .collect::<Result<Vec<_>, _>>()?;
    let lease_ms = lease(state, req.lease_ms)?;
    let wait_ms = req.wait_ms.unwrap_or(0);
    if wait_ms > max_wait {
        return Err(ApiError::bad_request(
            "waitMs",
            format!("`waitMs` must be at most {max_wait}, got {wait_ms}"),
        ));
    }
    let max = match req.max {
        None => 1,
        Some(m @ 1..=MAX_CLAIM_BATCH) => m as usize,
        Some(m) => {
            return Err(ApiError::bad_request(
                "max",
                format!("`max` must be between 1 and {MAX_CLAIM_BATCH}, got {m}"),
            ))
        }
    };
    let project = project::claim_filter(req.project.as_deref(), req.strict_project)?;
    Ok(ClaimPlan {
        prefixes,
        project,
        lease_ms,
        max,
        wait_ms,
    })
}

/// Extends the caller's lease on a task it holds.
#[utoipa::path(
    post,
    path = "/v1/teams/{team}/tasks/{id}/heartbeat",
    operation_id = "heartbeatTask",
    tag = "tasks",
    params(TaskPath),
    request_body(content = Option<Heartbeat>, description = "May be empty: the default lease"),
    responses(
        (status = 200, description = "The task with its new lease", body = Task,
            headers(("ETag" = String, description = "The task's new version"))),
        WriteErrors,
    )
)]
pub async fn heartbeat(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ActOnClaims>,
    Path((_, id)): Path<(String, String)>,
    ApiJson(req): ApiJson<Heartbeat>,
) -> ApiResult<Response> {
    Ok(task_response(
        StatusCode::OK,
        heartbeat_task(&state, &caller, &id, req).await?,
    ))
}

/// Renews the caller's lease on task `id` for `leaseMs`, within the lease bounds (HTTP and
/// MCP).
pub async fn heartbeat_task(
    state: &AppState,
    caller: &Caller,
    id: &str,
    req: Heartbeat,
) -> ApiResult<Task> {
    let lease_ms = lease(state, req.lease_ms)?;
    if let Some(note) = &req.workspace {
        validate::workspace(note)?;
    }
    let task = state.store.heartbeat(caller, id, lease_ms).await?;
    if let Some(note) = req.workspace {
        let until = crate::workspaces::now_ms() + lease_ms as i64;
        state
            .workspaces
            .note(&caller.team, &task.id, &caller.agent, note, until);
    }
    Ok(task)
}

/// Completes a task the caller holds, with an optional result.
#[utoipa::path(
    post,
    path = "/v1/teams/{team}/tasks/{id}/complete",
    operation_id = "completeTask",
    tag = "tasks",
    params(TaskPath),
    request_body(content = Option<CompleteTask>, description = "May be empty: no result"),
    responses(
        (status = 200, description = "The completed task", body = Task,
            headers(("ETag" = String, description = "The task's new version"))),
        WriteErrors,
    )
)]
pub async fn complete(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ActOnClaims>,
    Path((_, id)): Path<(String, String)>,
    ApiJson(req): ApiJson<CompleteTask>,
) -> ApiResult<Response> {
    super::name_task(&id);
    Ok(task_response(
        StatusCode::OK,
        complete_task(&state, &caller, &id, req).await?,
    ))
}

/// Completes a held task; its `result` is held to the JSON depth limit (HTTP and MCP).
pub async fn complete_task(
    state: &AppState,
    caller: &Caller,
    id: &str,
    req: CompleteTask,
) -> ApiResult<Task> {
    if let Some(result) = &req.result {
        validate::depth("result", result, state.settings.limits.max_json_depth)?;
    }
    let started = std::time::SystemTime::now();
    let result = super::evidence::check(state, caller, id, req.result).await?;
    let task = state.store.complete_task(caller, id, result).await?;
    super::task_traces::closed(caller, &task, task.attempts, "task.complete", started);
    state.workspaces.forget(&caller.team, &task.id);
    Ok(task)
}

/// Completes several held tasks in one request, all or none; answers `{"tasks": [...]}`.
#[utoipa::path(
    post,
    path = "/v1/teams/{team}/tasks/complete",
    operation_id = "completeTasks",
    tag = "tasks",
    params(TeamPath),
    request_body = CompleteTasks,
    responses(
        (status = 200, description = "The completed tasks", body = ClaimedTasks),
        WriteErrors,
    )
)]
pub async fn complete_many(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ActOnClaims>,
    Body(body): Body,
) -> ApiResult<Response> {
    let max = state.settings.limits.max_batch;
    let req: CompleteTasks = parse_batch(&body, "tasks", max)?;
    tracing::Span::current().record("count", req.tasks.len());
    for (i, t) in req.tasks.iter().enumerate() {
        if let Some(result) = &t.result {
            let field = format!("tasks[{i}].result");
            validate::depth(&field, result, state.settings.limits.max_json_depth)?;
        }
    }
    let mut items = Vec::with_capacity(req.tasks.len());
    for t in req.tasks {
        let result = super::evidence::check(&state, &caller, &t.id, t.result).await?;
        items.push((t.id, result));
    }
    let started = std::time::SystemTime::now();
    let tasks = state.store.complete_tasks(&caller, items).await?;
    for task in &tasks {
        super::task_traces::closed(&caller, task, task.attempts, "task.complete", started);
        state.workspaces.forget(&caller.team, &task.id);
    }
    Ok((StatusCode::OK, axum::Json(ClaimedTasks { tasks })).into_response())
}

/// Fails the caller's attempt at a task: with attempts left (and `final` not set) the task goes
/// back to `pending` for another try, the attempt counted and the reason kept; with
/// `final: true`, or on the last attempt, it becomes `failed`. Dependents wait on the final state.
#[utoipa::path(
    post,
    path = "/v1/teams/{team}/tasks/{id}/fail",
    operation_id = "failTask",
    tag = "tasks",
    params(TaskPath),
    request_body = FailTask,
    responses(
        (status = 200,
            description = "The task: `pending` again (event `task.retried`) or `failed` \
                           (event `task.failed`)",
            body = Task,
            headers(("ETag" = String, description = "The task's new version"))),
        WriteErrors,
    )
)]
pub async fn fail(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ActOnClaims>,
    Path((_, id)): Path<(String, String)>,
    ApiJson(req): ApiJson<FailTask>,
) -> ApiResult<Response> {
    super::name_task(&id);
    Ok(task_response(
        StatusCode::OK,
        fail_task(&state, &caller, &id, req).await?,
    ))
}

/// Fails a held task with a reason (HTTP and MCP).
pub async fn fail_task(
    state: &AppState,
    caller: &Caller,
    id: &str,
    req: FailTask,
) -> ApiResult<Task> {
    validate::text("reason", &req.reason, state.settings.limits.max_text_chars)?;
    if let Some(result) = &req.result {
        validate::depth("result", result, state.settings.limits.max_json_depth)?;
    }
    let started = std::time::SystemTime::now();
    let task = state
        .store
        .fail_task(caller, id, req.reason, req.final_, req.result)
        .await?;
    // The failure counted the attempt it ended.
    let before = (task.attempts - 1).max(0);
    super::task_traces::closed(caller, &task, before, "task.fail", started);
    state.workspaces.forget(&caller.team, &task.id);
    Ok(task)
}

/// Gives a held task back without counting an attempt; an optional `note` (why) is posted to
/// the coordinators as a `task_released` message.
#[utoipa::path(
    post,
    path = "/v1/teams/{team}/tasks/{id}/release",
    operation_id = "releaseTask",
    tag = "tasks",
    params(TaskPath),
    request_body(content = Option<ReleaseTask>, description = "May be empty: no note"),
    responses(
        (status = 200, description = "The task, pending again", body = Task,
            headers(("ETag" = String, description = "The task's new version"))),
        WriteErrors,
    )
)]
pub async fn release(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ActOnClaims>,
    Path((_, id)): Path<(String, String)>,
    ApiJson(req): ApiJson<ReleaseTask>,
) -> ApiResult<Response> {
    super::name_task(&id);
    Ok(task_response(
        StatusCode::OK,
        release_task(&state, &caller, &id, req).await?,
    ))
}

/// Releases a held task; a `note` goes to the coordinators as a `task_released` message
/// (HTTP and MCP).
pub async fn release_task(
    state: &AppState,
    caller: &Caller,
    id: &str,
    req: ReleaseTask,
) -> ApiResult<Task> {
    if let Some(note) = &req.note {
        validate::text("note", note, state.settings.limits.max_text_chars)?;
    }
    let started = std::time::SystemTime::now();
    let task = state.store.release_task(caller, id).await?;
    super::task_traces::closed(caller, &task, task.attempts, "task.release", started);
    state.workspaces.forget(&caller.team, &task.id);
    if let Some(note) = req.note {
        let message = PostMessage {
            to: Role::Coordinator.as_str().to_string(),
            kind: "task_released".to_string(),
            summary: format!("{id} released by {}: {note}", caller.agent),
            data: serde_json::json!({ "task": id, "note": note }),
        };
        state.store.post_message(caller, message, None).await?;
        crate::metrics::messages_posted(1);
    }
    Ok(task)
}
