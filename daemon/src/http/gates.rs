//! Human gates over HTTP: a coordinator holds a pending task until a person answers a
//! question or decides; approving (or answering an open-ended question) releases the task,
//! rejecting cancels it and tells the coordinators.

use super::authz::{act, Can};
use super::error::ApiResult;
use super::extract::ApiJson;
use super::openapi_types::*;
use super::AppState;
use crate::store::gates::asker;
use crate::store::{gate_messages, Caller};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use huddle_wire::{AnswerRequest, Decision, GateRequest, Gated, Task};

/// Holds a pending task until a person answers `question` (`kind: question`, the default) or
/// decides (`kind: approval`): creates the question as task
/// `HUMAN-NNN` (owned by `human`, which no agent may be, so no worker claims it) and adds it to
/// the task's `blockedBy`, all or nothing. No worker can claim the task, and completing it by
/// hand is refused with `blocked`, until the question is answered. Tasks waiting on a person:
/// `GET …/tasks?owner=human&status=pending`. The question is bound to the task as it is now:
/// editing its subject, description or metadata makes a decision refused until it is asked
/// again (which withdraws the stale question).
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
pub async fn gate(
    State(state): State<AppState>,
    Can(caller, _): Can<act::EditTasks>,
    Path((_, id)): Path<(String, String)>,
    ApiJson(body): ApiJson<GateRequest>,
) -> ApiResult<(StatusCode, Json<Gated>)> {
    super::name_task(&id);
    Ok((
        StatusCode::CREATED,
        Json(gate_task(&state, &caller, &id, &body).await?),
    ))
}

/// Gates task `id` with `gate` (the HTTP route and the `task_gate` MCP tool).
pub async fn gate_task(
    state: &AppState,
    caller: &Caller,
    id: &str,
    gate: &GateRequest,
) -> ApiResult<Gated> {
    let (question, task) = state.store.gate_task(caller, id, gate).await?;
    Ok(Gated { question, task })
}

/// Answers a question for a person (`HUMAN-NNN`) with a `decision` and/or an `answer`:
/// completes it with `{answer, answeredBy, decision}` as its result. `approve` (or, on a
/// `question` gate, an answer alone) releases the task it held; `reject` cancels that task for
/// good, with the answer (or "rejected at HUMAN-NNN") as its `failureReason`, and tells the
/// coordinators (a `gate_rejected` message). An `approval` gate without `decision`: 400.
/// Refused with 409: anything but an open question, a withdrawn question (its task was
/// cancelled, or it was asked again), and a task edited since the question was asked.
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
pub async fn answer(
    State(state): State<AppState>,
    Can(caller, _): Can<act::EditTasks>,
    Path((_, id)): Path<(String, String)>,
    ApiJson(body): ApiJson<AnswerRequest>,
) -> ApiResult<Json<Task>> {
    super::name_task(&id);
    Ok(Json(answer_question(&state, &caller, &id, &body).await?))
}

/// Answers question `id` as `caller` (the HTTP route and the `task_answer` MCP tool).
pub async fn answer_question(
    state: &AppState,
    caller: &Caller,
    id: &str,
    answer: &AnswerRequest,
) -> ApiResult<Task> {
    let (question, task) = state.store.answer_gate(caller, id, answer).await?;
    if asker(&question.metadata).is_some() {
        super::holder_questions::tell_asker(state, caller, &question, &task.id).await?;
    } else if answer.decision == Some(Decision::Reject) {
        let message = gate_messages::rejection_message(
            &question,
            &task,
            &caller.agent,
            answer.answer.as_deref(),
        );
        state.store.post_message(caller, message, None).await?;
        crate::metrics::messages_posted(1);
    }
    Ok(question)
}
