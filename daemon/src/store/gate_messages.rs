//! The messages a decision sends: `gate_rejected` to the coordinators when a gate's task is
//! cancelled, `question_answered` to the holder that asked mid-task.

use huddle_wire::{PostMessage, Role, Task};

/// The `gate_rejected` message to the coordinators: `task` was cancelled because `by` (a
/// person, or the deadline) rejected `question`.
pub fn rejection_message(
    question: &Task,
    task: &Task,
    by: &str,
    answer: Option<&str>,
) -> PostMessage {
    let reason = task.failure_reason.clone().unwrap_or_default();
    PostMessage {
        to: Role::Coordinator.as_str().to_string(),
        kind: "gate_rejected".to_string(),
        summary: format!(
            "{} cancelled: {} rejected by {by}: {reason}",
            task.id, question.id
        ),
        data: serde_json::json!({
            "task": task.id, "question": question.id, "decision": "reject",
            "answer": answer, "answeredBy": by,
        }),
    }
}

/// The message that wakes the holder that asked `question` about `task` through its inbox:
/// what was decided, by whom, and the answer.
pub fn answered_message(question: &Task, task_id: &str, asker: &str) -> PostMessage {
    let result = question.result.clone().unwrap_or_default();
    let by = result["answeredBy"].as_str().unwrap_or_default();
    let decision = result["decision"].as_str();
    let answer = result["answer"].as_str();
    let said = match (decision, answer) {
        (Some(d), Some(a)) => format!("{d}: {a}"),
        (Some(d), None) => d.to_string(),
        (None, Some(a)) => a.to_string(),
        (None, None) => String::new(),
    };
    PostMessage {
        to: asker.to_string(),
        kind: "question_answered".to_string(),
        summary: format!("{} on {task_id} answered by {by} — {said}", question.id),
        data: serde_json::json!({
            "task": task_id, "question": question.id, "decision": decision,
            "answer": answer, "answeredBy": by,
        }),
    }
}
