//! Human gates: a task that waits for a person's answer before any worker may claim it.
//!
//! A gate is a task of its own, `HUMAN-NNN`, owned by the reserved name `human` (no agent may
//! take that name, so no worker ever claims it), with the question as its subject and
//! description, added to the gated task's `blockedBy` in the same transaction. Answering
//! completes it with `{answer, answeredBy}` as its result, which makes the gated task ready the
//! way any completed blocker does; the question and its answer stay in the task list.

use super::rules::TaskState;
use super::{Caller, StoreError, StoreResult};
use async_trait::async_trait;
use huddle_wire::{codes, AnswerRequest, GateKind, GateRequest, NewTask, Task, TaskStatus};
use serde_json::json;
use sha2::{Digest, Sha256};

/// The owner of every question for a person; agents may not take this name.
pub const HUMAN: &str = "human";
/// The id prefix of questions.
pub const PREFIX: &str = "HUMAN";
/// The longest question or answer, in characters.
pub const MAX_TEXT_CHARS: usize = 4_000;
/// The longest subject taken from a question's first line.
const SUBJECT_CHARS: usize = 200;

#[async_trait]
pub trait GateStore {
    /// Holds pending task `id` until a person answers `question`: creates the question task
    /// and adds it to `id`'s blockers, all or nothing. Returns (question, gated task).
    async fn gate_task(
        &self,
        caller: &Caller,
        id: &str,
        gate: &GateRequest,
    ) -> StoreResult<(Task, Task)>;

    /// Answers question `id` (`HUMAN-NNN`) by [`super::gate_decisions::decide`]: completes it,
    /// and on `reject` cancels the gated task, all or nothing. Returns (question, gated task).
    async fn answer_gate(
        &self,
        caller: &Caller,
        id: &str,
        answer: &AnswerRequest,
    ) -> StoreResult<(Task, Task)>;
}

/// What a decision is bound to: the gated task's subject, description and metadata as they
/// were when the question was asked (a short SHA-256). Re-serialising the metadata makes the
/// hash independent of how a backend stores the JSON text.
pub fn content_hash(task: &TaskState) -> String {
    let metadata = super::rules::parse_json(&task.metadata);
    let text = json!([task.subject, task.description, metadata]).to_string();
    hex::encode(&Sha256::digest(text.as_bytes())[..12])
}

/// Only a pending task is gated: one in progress has a worker on it (message it instead), a
/// finished one needs nothing more.
pub fn check_gateable(id: &str, status: TaskStatus) -> StoreResult<()> {
    match status {
        TaskStatus::Pending => Ok(()),
        TaskStatus::InProgress => Err(StoreError::conflict(
            codes::INVALID_TRANSITION,
            format!(
                "{id} is in progress: a gate holds a task before a worker claims it; message its \
                 holder, or release it first"
            ),
        )),
        closed => Err(StoreError::Conflict {
            code: codes::TASK_CLOSED,
            message: format!("task {id} is already {closed}"),
            details: json!({ "status": closed }),
        }),
    }
}

pub fn check_text(field: &str, text: &str) -> StoreResult<()> {
    if text.trim().is_empty() {
        return Err(StoreError::invalid(field, format!("{field} is empty")));
    }
    if text.chars().count() > MAX_TEXT_CHARS {
        return Err(StoreError::invalid(
            field,
            format!("{field} is longer than {MAX_TEXT_CHARS} characters"),
        ));
    }
    Ok(())
}

/// The question task for gating `gated` (its content as asked: [`content_hash`]).
pub fn question_task(
    gated: &TaskState,
    gate: &GateRequest,
    asked_by: &str,
) -> StoreResult<NewTask> {
    let question = gate.question.as_str();
    check_text("question", question)?;
    let first_line = question.trim().lines().next().unwrap_or_default();
    let mut subject: String = first_line.chars().take(SUBJECT_CHARS).collect();
    if first_line.chars().count() > SUBJECT_CHARS {
        subject.push('…');
    }
    Ok(NewTask {
        prefix: Some(PREFIX.into()),
        subject,
        description: Some(question.to_string()),
        owner: Some(HUMAN.into()),
        metadata: Some(json!({ "gate": {
            "for": gated.id,
            "askedBy": asked_by,
            "kind": gate.kind,
            "taskHash": content_hash(gated),
        } })),
        ..NewTask::default()
    })
}

/// The kind a question was asked as; one asked before kinds existed is a `question`.
pub fn kind_of(metadata: &serde_json::Value) -> GateKind {
    serde_json::from_value(metadata["gate"]["kind"].clone()).unwrap_or_default()
}
