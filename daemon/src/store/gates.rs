//! Human gates: a task that waits for a person's answer before any worker may claim it.
//!
//! A gate is a task of its own, `HUMAN-NNN`, owned by the reserved name `human` (no agent may
//! take that name, so no worker ever claims it), with the question as its subject and
//! description, added to the gated task's `blockedBy` in the same transaction. Answering
//! completes it with `{answer, answeredBy}` as its result, which makes the gated task ready the
//! way any completed blocker does; the question and its answer stay in the task list.

use super::{Caller, StoreError, StoreResult};
use async_trait::async_trait;
use huddle_wire::{codes, NewTask, Task, TaskStatus};
use serde_json::json;

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
        question: &str,
    ) -> StoreResult<(Task, Task)>;
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

/// The question task for gating `gated`.
pub fn question_task(gated: &str, question: &str, asked_by: &str) -> StoreResult<NewTask> {
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
        metadata: Some(json!({ "gate": { "for": gated, "askedBy": asked_by } })),
        ..NewTask::default()
    })
}

/// Whether a task is a question for a person (answered through the gate's answer, not claimed).
pub fn is_question(task: &Task) -> bool {
    task.owner.as_deref() == Some(HUMAN) && task.metadata.get("gate").is_some()
}

/// Refuses to answer what is not an open question.
pub fn check_answerable(task: &Task) -> StoreResult<()> {
    if !is_question(task) {
        return Err(StoreError::conflict(
            codes::INVALID_TRANSITION,
            format!(
                "{} is not a question for a person (POST …/tasks/{{id}}/gate asks one)",
                task.id
            ),
        ));
    }
    Ok(())
}

/// The result an answered question keeps.
pub fn answer_result(answer: &str, by: &str) -> serde_json::Value {
    json!({ "answer": answer, "answeredBy": by })
}
