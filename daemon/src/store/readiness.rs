//! Why a task is not handed to a claim now (`GET …/tasks/{id}/why-not-ready`): not pending,
//! blockers not completed (questions for a person among them), or a file scope overlapping a
//! task in progress. The same facts the claims act on, put in words.

use super::gates;
use super::rules::scope::{self, Held};
use huddle_wire::{NotReadyKind, NotReadyReason, Task, TaskStatus};

/// The reasons, empty when a claim could take `task` now. `blockers`: the status of each of its
/// `blockedBy` tasks; `held`: the team's tasks in progress that have a scope.
pub fn why_not_ready(
    task: &Task,
    blockers: &[(String, TaskStatus)],
    held: &[Held],
) -> Vec<NotReadyReason> {
    if task.status != TaskStatus::Pending {
        let by = match (&task.claimed_by, task.status) {
            (Some(agent), TaskStatus::InProgress) => format!(", held by {agent}"),
            _ => String::new(),
        };
        let mut reason = NotReadyReason::new(
            NotReadyKind::Status,
            format!(
                "{} is {}{by}: only pending tasks are claimed",
                task.id, task.status
            ),
        );
        reason.status = Some(task.status);
        if task.status == TaskStatus::InProgress {
            reason.holder = task.claimed_by.clone();
        }
        return vec![reason];
    }
    let mut reasons = Vec::new();
    let open: Vec<&(String, TaskStatus)> = blockers
        .iter()
        .filter(|(_, status)| *status != TaskStatus::Completed)
        .collect();
    let is_gate = |id: &str| {
        id.strip_prefix(gates::PREFIX)
            .is_some_and(|r| r.starts_with('-'))
    };
    let (questions, others): (Vec<_>, Vec<_>) = open.into_iter().partition(|(id, _)| is_gate(id));
    if !others.is_empty() {
        let named: Vec<String> = others.iter().map(|(id, s)| format!("{id} ({s})")).collect();
        let mut reason = NotReadyReason::new(
            NotReadyKind::BlockedBy,
            format!(
                "blocked by {}: each must be completed first",
                named.join(", ")
            ),
        );
        reason.tasks = others.iter().map(|(id, _)| id.clone()).collect();
        reasons.push(reason);
    }
    if !questions.is_empty() {
        let ids: Vec<String> = questions.iter().map(|(id, _)| id.clone()).collect();
        let mut reason = NotReadyReason::new(
            NotReadyKind::Gate,
            format!("waiting for a person to answer {}", ids.join(", ")),
        );
        reason.tasks = ids;
        reasons.push(reason);
    }
    let globs = scope::of_value(&task.metadata).unwrap_or_default();
    for h in held.iter().filter(|h| h.id != task.id) {
        if let Some((glob, held_glob)) = scope::first_overlap(&globs, &h.globs) {
            let by = h
                .holder
                .as_deref()
                .map(|a| format!(" (held by {a})"))
                .unwrap_or_default();
            let mut reason = NotReadyReason::new(
                NotReadyKind::Scope,
                format!(
                    "its scope `{glob}` overlaps `{held_glob}` of {}{by}, in progress: \
                     claimable once that task is completed, failed or released",
                    h.id
                ),
            );
            reason.tasks = vec![h.id.clone()];
            reason.holder = h.holder.clone();
            reason.glob = Some(glob);
            reason.held_glob = Some(held_glob);
            reasons.push(reason);
        }
    }
    reasons
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn task(id: &str, status: TaskStatus, metadata: serde_json::Value) -> Task {
        serde_json::from_value(json!({
            "id": id, "subject": "s", "description": "", "status": status, "attempts": 0,
            "maxAttempts": 3, "blockedBy": [], "blocks": [], "metadata": metadata,
            "version": 1, "createdAt": "2026-01-01T00:00:00.000Z",
            "updatedAt": "2026-01-01T00:00:00.000Z"
        }))
        .unwrap()
    }

    #[test]
    fn a_claimable_task_has_no_reason() {
        let t = task("T-1", TaskStatus::Pending, json!({"scope": ["src/a"]}));
        let held = vec![Held {
            id: "T-2".into(),
            holder: Some("w".into()),
            globs: vec!["docs".into()],
        }];
        assert!(why_not_ready(&t, &[("T-0".into(), TaskStatus::Completed)], &held).is_empty());
    }

    #[test]
    fn blockers_questions_and_scopes_are_named() {
        let t = task("T-1", TaskStatus::Pending, json!({"scope": ["src/**"]}));
        let blockers = vec![
            ("T-3".to_string(), TaskStatus::Pending),
            ("HUMAN-1".to_string(), TaskStatus::Pending),
            ("T-4".to_string(), TaskStatus::Completed),
        ];
        let held = vec![
            Held {
                id: "T-1".into(),
                holder: None,
                globs: vec!["src".into()],
            },
            Held {
                id: "T-2".into(),
                holder: Some("w1".into()),
                globs: vec!["src/a.rs".into()],
            },
        ];
        let reasons = why_not_ready(&t, &blockers, &held);
        let kinds: Vec<NotReadyKind> = reasons.iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            [
                NotReadyKind::BlockedBy,
                NotReadyKind::Gate,
                NotReadyKind::Scope
            ]
        );
        assert_eq!(reasons[0].tasks, ["T-3"]);
        assert_eq!(reasons[1].tasks, ["HUMAN-1"]);
        let scope = &reasons[2];
        assert_eq!(
            (scope.tasks.as_slice(), scope.holder.as_deref()),
            (&["T-2".to_string()][..], Some("w1"))
        );
        assert_eq!(
            (scope.glob.as_deref(), scope.held_glob.as_deref()),
            (Some("src/**"), Some("src/a.rs"))
        );
        assert!(scope.message.contains("T-2") && scope.message.contains("w1"));
    }

    #[test]
    fn a_task_not_pending_says_its_status() {
        let mut t = task("T-1", TaskStatus::InProgress, json!({}));
        t.claimed_by = Some("w1".into());
        let reasons = why_not_ready(&t, &[], &[]);
        assert_eq!(reasons.len(), 1);
        assert_eq!(
            (reasons[0].kind, reasons[0].holder.as_deref()),
            (NotReadyKind::Status, Some("w1"))
        );
    }
}
