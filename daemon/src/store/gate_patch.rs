//! What only a person may do to a person-only gate by `PATCH`, checked for every other
//! caller on both backends before the patch: edit the question, drop it from the blockers of
//! the task it holds, or force that task completed past it.

use super::error::{StoreError, StoreResult};
use super::gate_decisions::holds_for_person;
use super::gates::{self, person_only};
use super::rules::{parse_json, TaskState};
use super::types::Caller;
use huddle_wire::{codes, Role, TaskPatch, TaskStatus};

/// The ids a patch names as questions to look at: the patched task itself when it is a
/// question, and the questions it would remove or complete past. Empty for most patches, so
/// they load nothing more.
pub fn patch_touches_questions(id: &str, patch: &TaskPatch) -> bool {
    let prefix = format!("{}-", gates::PREFIX);
    id.starts_with(&prefix)
        || patch
            .remove_blocked_by
            .iter()
            .any(|b| b.starts_with(&prefix))
        || (patch.force && patch.status == Some(TaskStatus::Completed))
}

/// What only a person may do by `PATCH`: edit a person-only question (it is answered, not
/// edited), drop one from the blockers of the task it holds, or force that task completed past
/// it. `target` is the patched task, `questions` its loaded `HUMAN-NNN` blockers.
pub fn check_patch(
    caller: &Caller,
    target: &TaskState,
    patch: &TaskPatch,
    questions: &[TaskState],
) -> StoreResult<()> {
    if caller.role == Role::Lead {
        return Ok(());
    }
    let refuse = |message: String| StoreError::Forbidden {
        code: codes::PERSON_REQUIRED,
        message,
    };
    let metadata = parse_json(&target.metadata);
    if target.owner.as_deref() == Some(gates::HUMAN) && person_only(&metadata) {
        return Err(refuse(format!(
            "{} is a question for a person: a lead answers it (POST …/tasks/{}/answer); it is \
             not edited",
            target.id, target.id
        )));
    }
    let open: Vec<&TaskState> = questions
        .iter()
        .filter(|q| holds_for_person(q, &target.id))
        .collect();
    if let Some(q) = open
        .iter()
        .find(|q| patch.remove_blocked_by.contains(&q.id))
    {
        return Err(refuse(format!(
            "{} holds {} for a person's decision; only a lead removes it",
            q.id, target.id
        )));
    }
    if patch.force && patch.status == Some(TaskStatus::Completed) {
        if let Some(q) = open.first() {
            return Err(refuse(format!(
                "{} waits for a person's decision at {}; it is not forced complete past it",
                target.id, q.id
            )));
        }
    }
    Ok(())
}
