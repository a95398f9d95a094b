//! A worker asks a person mid-task and waits: `POST …/tasks/{id}/ask` (the holder only) holds
//! its task for the answer, and `GET …/tasks/{question}/decision?waitMs=` is the long poll
//! that wakes it. The holder's inbox gets a `question_answered` message too.

use super::authz::{act, Can};
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiQuery};
use super::openapi_types::*;
use super::task_claims::lease;
use super::AppState;
use crate::store::gate_decisions::record;
use crate::store::gate_messages::answered_message;
use crate::store::gates::{asker, AskTerms};
use crate::store::{Caller, StoreError};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use huddle_wire::{codes, AskRequest, ErrorBody, GateRecord, GateStatus, Gated, Task};
use serde::Deserialize;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;
use utoipa::IntoParams;

/// The holder of an in-progress task asks a person (`kind: question` or `approval`) and keeps
/// its task while it waits: the question is created as task `HUMAN-NNN` and added to the
/// task's blockers, and the task's lease is kept until the question's deadline (at most the
/// team's `questions.maxWaitMinutes` ahead; that far when none is given, with `onDeadline`
/// `reject` by default) plus `leaseMs`. The holder's heartbeats never shorten it, and no one else
/// can claim the task. A decision neither releases nor cancels the task: the holder reads it
/// (`GET …/tasks/{question}/decision`, or the `question_answered` message in its inbox) and
/// goes on with the lease `leaseMs` from then. One open question per task; a holder that
/// completes, fails or releases the task withdraws it.
#[utoipa::path(
    post,
    path = "/v1/teams/{team}/tasks/{id}/ask",
    operation_id = "askQuestion",
    tag = "tasks",
    params(TaskPath),
    request_body = AskRequest,
    responses(
        (status = 201, description = "The question and the task it keeps waiting", body = Gated),
        WriteErrors,
    )
)]
pub async fn ask(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ActOnClaims>,
    Path((_, id)): Path<(String, String)>,
    ApiJson(body): ApiJson<AskRequest>,
) -> ApiResult<(StatusCode, Json<Gated>)> {
    super::name_task(&id);
    Ok((
        StatusCode::CREATED,
        Json(ask_question(&state, &caller, &id, &body).await?),
    ))
}

/// Asks `req` about task `id` as its holder (the HTTP route and the `task_ask` MCP tool).
pub async fn ask_question(
    state: &AppState,
    caller: &Caller,
    id: &str,
    req: &AskRequest,
) -> ApiResult<Gated> {
    let terms = AskTerms {
        max_wait_ms: max_wait_minutes(state, caller.team_id).await? as i64 * 60_000,
        resume_lease_ms: lease(state, req.lease_ms)?,
    };
    let (question, task) = state
        .store
        .ask_holder(caller, id, &req.gate(), terms)
        .await?;
    Ok(Gated { question, task })
}

/// The longest a holder of this team waits on a question (minutes): the team's setting, or
/// the daemon's default.
pub async fn max_wait_minutes(state: &AppState, team_id: i64) -> ApiResult<u64> {
    let (settings, _) = state.store.team_settings(team_id).await?;
    Ok(settings
        .questions
        .max_wait_minutes
        .unwrap_or(state.settings.tasks.max_question_wait_minutes))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct DecisionQuery {
    /// How long to wait for a decision while the question is open (ms, at most the daemon's
    /// `[tasks] max_wait_ms`; default 0: answer at once).
    wait_ms: Option<u64>,
}

/// Question `HUMAN-NNN` as a gate record: open, answered (with the decision, the answer, who
/// and when) or withdrawn. With `waitMs`, an open question is waited on until it is decided or
/// the wait ends (then it is answered as still open): the holder's long poll.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/tasks/{id}/decision",
    operation_id = "questionDecision",
    tag = "tasks",
    params(TaskPath, DecisionQuery),
    responses(
        (status = 200, description = "The question and where it stands", body = GateRecord),
        (status = 409, description = "The task is no question for a person", body = ErrorBody),
        QueryErrors,
    )
)]
pub async fn decision(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadTasks>,
    Path((_, id)): Path<(String, String)>,
    ApiQuery(q): ApiQuery<DecisionQuery>,
) -> ApiResult<Json<GateRecord>> {
    let wait_ms = q.wait_ms.unwrap_or(0);
    let max = state.settings.tasks.max_wait_ms;
    if wait_ms > max {
        return Err(StoreError::invalid(
            "waitMs",
            format!("`waitMs` must be at most {max}, got {wait_ms}"),
        )
        .into());
    }
    Ok(Json(wait_decision(&state, &caller, &id, wait_ms).await?))
}

/// Question `id`'s record, waiting up to `wait_ms` while it is open (HTTP and the
/// `task_decision` MCP tool). Subscribed before each look, so a decision taken meanwhile is
/// never missed.
pub async fn wait_decision(
    state: &AppState,
    caller: &Caller,
    id: &str,
    wait_ms: u64,
) -> ApiResult<GateRecord> {
    let deadline = Instant::now() + Duration::from_millis(wait_ms);
    let _online = (wait_ms > 0).then(|| state.presence.waiting(caller));
    let mut events = state.hub.subscribe_events(caller.team_id);
    let mention = format!("\"{id}\"");
    loop {
        let question = state.store.get_task(caller.team_id, id).await?;
        let record = record_of(&question)?;
        if record.status != GateStatus::Open || Instant::now() >= deadline {
            return Ok(record);
        }
        // Until an event names the question (or the stream lagged: look again to be sure).
        loop {
            tokio::select! {
                item = events.recv() => match item {
                    Ok(item) if !item.json().contains(&mention) => continue,
                    Ok(_) | Err(RecvError::Lagged(_)) => break,
                    Err(RecvError::Closed) => return Ok(record),
                },
                _ = tokio::time::sleep_until(deadline) => break,
                _ = state.shutdown.cancelled() => return Ok(record),
            }
        }
    }
}

/// The gate record of question task `q`, or 409 when it is no question for a person.
fn record_of(q: &Task) -> ApiResult<GateRecord> {
    let about = q.metadata["gate"]["for"].as_str().unwrap_or_default();
    record(q, about).ok_or_else(|| {
        ApiError::from(StoreError::conflict(
            codes::INVALID_TRANSITION,
            format!(
                "{} is not a question for a person (POST …/tasks/{{id}}/ask asks one)",
                q.id
            ),
        ))
    })
}

/// Tells the holder that asked `question` about `task_id` that it was decided (its inbox).
pub async fn tell_asker(
    state: &AppState,
    by: &Caller,
    question: &Task,
    task_id: &str,
) -> ApiResult<()> {
    let Some(holder) = asker(&question.metadata) else {
        return Ok(());
    };
    let message = answered_message(question, task_id, holder);
    state.store.post_message(by, message, None).await?;
    crate::metrics::messages_posted(1);
    Ok(())
}
