//! What a person's answer does to a gate, written once for both backends: the checks that
//! refuse it (not a question, already answered, withdrawn, the task changed since it was
//! asked), approve/reject, and withdrawing the questions of a cancelled task. Backends load
//! the two [`TaskState`]s, call [`decide`], and save what it changed in one transaction.

use super::gates::{self, check_text, content_hash, kind_of};
use super::rules::{parse_json, TaskState};
use super::{StoreError, StoreResult};
use huddle_wire::{
    codes, AnswerRequest, Decision, GateKind, GateRecord, GateStatus, Task, TaskStatus,
};
use serde_json::json;

/// The id of the task question `q` holds, or 409 when `q` is not a question for a person.
pub fn gated_id(q: &TaskState) -> StoreResult<String> {
    let metadata = parse_json(&q.metadata);
    let is_question = q.owner.as_deref() == Some(gates::HUMAN) && metadata.get("gate").is_some();
    match metadata["gate"]["for"].as_str().filter(|_| is_question) {
        Some(id) => Ok(id.to_string()),
        None => Err(StoreError::conflict(
            codes::INVALID_TRANSITION,
            format!(
                "{} is not a question for a person (POST …/tasks/{{id}}/gate asks one)",
                q.id
            ),
        )),
    }
}

/// Checks `req` against question `q` and the task it holds, then applies it: the question
/// completed with `{answer, answeredBy, decision}`, and on `reject` the task cancelled with the
/// person's reason. Returns the decision taken (`None`: a plain answer to a question gate).
pub fn decide(
    q: &mut TaskState,
    task: &mut TaskState,
    req: &AnswerRequest,
    by: &str,
) -> StoreResult<Option<Decision>> {
    let metadata = parse_json(&q.metadata);
    check_open(q, task, &metadata)?;
    if let Some(answer) = &req.answer {
        check_text("answer", answer)?;
    }
    match (req.decision, kind_of(&metadata), &req.answer) {
        (None, GateKind::Approval, _) => {
            return Err(StoreError::invalid(
                "decision",
                format!(
                    "{} asks for a decision: send \"decision\": \"approve\" or \"reject\" \
                     (an \"answer\" may go with either)",
                    q.id
                ),
            ))
        }
        (None, GateKind::Question, None) => {
            return Err(StoreError::invalid(
                "answer",
                "send an \"answer\", a \"decision\" (approve or reject), or both",
            ))
        }
        _ => {}
    }
    let mut result = json!({ "answeredBy": by });
    if let Some(answer) = &req.answer {
        result["answer"] = json!(answer);
    }
    if let Some(decision) = req.decision {
        result["decision"] = json!(decision);
    }
    if req.decision == Some(Decision::Reject) {
        let reason = req
            .answer
            .clone()
            .unwrap_or_else(|| format!("rejected at {}", q.id));
        task.set_status(TaskStatus::Cancelled, false, &[])?;
        // After `set_status`, which clears a cancelled task's reason.
        task.failure_reason = Some(reason);
    }
    q.status = TaskStatus::Completed;
    q.result = Some(result.to_string());
    q.clear_claim();
    Ok(req.decision)
}

/// A decision is taken only on an open question, for a task still open and unchanged since.
fn check_open(q: &TaskState, task: &TaskState, metadata: &serde_json::Value) -> StoreResult<()> {
    let refuse = |message: String, why: &str| StoreError::Conflict {
        code: codes::INVALID_TRANSITION,
        message,
        details: json!({ "question": q.id, "task": task.id, "why": why }),
    };
    match q.status {
        TaskStatus::Pending => {}
        TaskStatus::Cancelled => {
            return Err(refuse(
                format!("{} was withdrawn and cannot be answered", q.id),
                "withdrawn",
            ))
        }
        closed => {
            return Err(StoreError::Conflict {
                code: codes::TASK_CLOSED,
                message: format!("{} is already {closed}", q.id),
                details: json!({ "status": closed }),
            })
        }
    }
    if task.status == TaskStatus::Cancelled {
        return Err(refuse(
            format!("{} is cancelled, so {} is withdrawn", task.id, q.id),
            "withdrawn",
        ));
    }
    // Questions asked before decisions were bound carry no hash, and are answered as before.
    let asked = metadata["gate"]["taskHash"].as_str();
    if asked.is_some_and(|h| h != content_hash(task)) {
        return Err(refuse(
            format!(
                "{} changed since {} was asked; ask again (POST …/tasks/{}/gate) for a decision \
                 on it as it is now",
                task.id, q.id, task.id
            ),
            "changed",
        ));
    }
    Ok(())
}

/// Withdraws open question `q` because of `why` (its task was cancelled, or it was asked
/// again): cancelled, with a reason that says so. `false` when `q` was not open.
pub fn withdraw(q: &mut TaskState, why: &str) -> StoreResult<bool> {
    if q.status != TaskStatus::Pending {
        return Ok(false);
    }
    q.set_status(TaskStatus::Cancelled, true, &[])?;
    q.failure_reason = Some(format!("withdrawn: {why}"));
    Ok(true)
}

/// The question ids among a task's blockers (`HUMAN-NNN`); which of them are questions for
/// this task is checked on the loaded question.
pub fn question_ids(blocked_by: &[String]) -> impl Iterator<Item = &String> {
    let prefix = format!("{}-", gates::PREFIX);
    blocked_by.iter().filter(move |b| b.starts_with(&prefix))
}

/// The record of one gate on `task_id` as a claim shows it, or `None` when `q` is no question
/// for that task.
pub fn record(q: &Task, task_id: &str) -> Option<GateRecord> {
    let gate = q.metadata.get("gate")?;
    if q.owner.as_deref() != Some(gates::HUMAN) || gate["for"] != json!(task_id) {
        return None;
    }
    let result = q.result.clone().unwrap_or_default();
    let status = match q.status {
        TaskStatus::Completed => GateStatus::Answered,
        TaskStatus::Cancelled | TaskStatus::Failed => GateStatus::Withdrawn,
        _ => GateStatus::Open,
    };
    let answered = status == GateStatus::Answered;
    let text = |key: &str| result[key].as_str().map(str::to_string);
    Some(GateRecord {
        id: q.id.clone(),
        question: q.description.clone(),
        kind: kind_of(&q.metadata),
        status,
        decision: serde_json::from_value(result["decision"].clone()).ok(),
        answer: text("answer"),
        answered_by: text("answeredBy"),
        answered_at: answered.then(|| q.updated_at.clone()),
    })
}

/// A rejected task stays closed: reopening it (`status: pending`) would hand a worker what a
/// person refused. `questions` are its loaded `HUMAN-NNN` blockers.
pub fn check_not_rejected(task_id: &str, questions: &[TaskState]) -> StoreResult<()> {
    for q in questions {
        let result = q.result.as_deref().map(parse_json).unwrap_or_default();
        if q.status == TaskStatus::Completed && result["decision"] == json!(Decision::Reject) {
            return Err(StoreError::conflict(
                codes::INVALID_TRANSITION,
                format!(
                    "{task_id} was rejected at {}; it is not reopened (create a new task, gated \
                     again if need be)",
                    q.id
                ),
            ));
        }
    }
    Ok(())
}
