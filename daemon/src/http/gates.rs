//! Human gates over HTTP: a coordinator holds a pending task until a person answers a
//! question, and the answer (from the dashboard, the CLI or this API) releases it.

use super::authz::{act, Can};
use super::error::ApiResult;
use super::extract::ApiJson;
use super::openapi_types::*;
use super::AppState;
use crate::store::{gates, Caller};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use huddle_wire::{AnswerRequest, GateRequest, Gated, Task};

/// Holds a pending task until a person answers `question`: creates the question as task
/// `HUMAN-NNN` (owned by `human`, which no agent may be, so no worker claims it) and adds it to
/// the task's `blockedBy`, all or nothing. No worker can claim the task, and completing it by
/// hand is refused with `blocked`, until the question is answered. Tasks waiting on a person:
/// `GET …/tasks?owner=human&status=pending`.
#[utoipa::path(
    post,
    path = "/v1/teams/{team}/tasks/{id}/gate",
    operation_id = "gateTask",
    tag = "tasks",
    params(TaskPath),
    request_body = GateRequest,
    responses(
        (status = 201, description = "The question and the task it holds", body = Gated),
        WriteErrors,
    )
)]
#[tracing::instrument(skip_all, fields(agent = %caller.agent, task = %id))]
pub async fn gate(
    State(state): State<AppState>,
    Can(caller, _): Can<act::EditTasks>,
    Path((_, id)): Path<(String, String)>,
    ApiJson(body): ApiJson<GateRequest>,
) -> ApiResult<(StatusCode, Json<Gated>)> {
    Ok((
        StatusCode::CREATED,
        Json(gate_task(&state, &caller, &id, &body.question).await?),
    ))
}

/// Gates task `id` with `question` (the HTTP route and the `task_gate` MCP tool).
pub async fn gate_task(
    state: &AppState,
    caller: &Caller,
    id: &str,
    question: &str,
) -> ApiResult<Gated> {
    let (question, task) = state.store.gate_task(caller, id, question).await?;
    Ok(Gated { question, task })
}

/// Answers a question for a person (`HUMAN-NNN`): completes it with
/// `{"answer": …, "answeredBy": …}` as its result, which releases the task it held (ready to
/// claim once its other blockers are done). Anything but an open question: 409.
#[utoipa::path(
    post,
    path = "/v1/teams/{team}/tasks/{id}/answer",
    operation_id = "answerQuestion",
    tag = "tasks",
    params(TaskPath),
    request_body = AnswerRequest,
    responses(
        (status = 200, description = "The answered question", body = Task),
        WriteErrors,
    )
)]
#[tracing::instrument(skip_all, fields(agent = %caller.agent, task = %id))]
pub async fn answer(
    State(state): State<AppState>,
    Can(caller, _): Can<act::EditTasks>,
    Path((_, id)): Path<(String, String)>,
    ApiJson(body): ApiJson<AnswerRequest>,
) -> ApiResult<Json<Task>> {
    Ok(Json(
        answer_question(&state, &caller, &id, &body.answer).await?,
    ))
}

/// Answers question `id` as `caller` (the HTTP route and the `task_answer` MCP tool).
pub async fn answer_question(
    state: &AppState,
    caller: &Caller,
    id: &str,
    answer: &str,
) -> ApiResult<Task> {
    gates::check_text("answer", answer)?;
    let question = state.store.get_task(caller.team_id, id).await?;
    gates::check_answerable(&question)?;
    let result = gates::answer_result(answer, &caller.agent);
    Ok(state.store.complete_task(caller, id, Some(result)).await?)
}
