//! The store's rules, shared by every backend: what a valid task, message or memory change is,
//! who may act on a claim, what a lease expiry does, and the errors that say so. Backends only
//! load and save rows; a rule changed here changes for SQLite and PostgreSQL at once.
//! Tasks and claims are here; the bus's rules are in `messages`, shared memory's in
//! `memory` (both re-exported).

mod memory;
mod messages;

pub use memory::{changed_memory, MemoryChangeKind, MemoryLimits};
pub use messages::{at_message, check_ack, is_group_recipient, unknown_recipient, validate_post};

use super::{Caller, StoreError, StoreResult};
use crate::config::LimitSettings as Limits;
use crate::validate;
use huddle_wire::codes;
use huddle_wire::limits::MAX_ATTEMPTS_CEILING;
use huddle_wire::{NewTask, Role, TaskPatch, TaskStatus};
use serde_json::Value;

/// RFC 3339 in UTC with milliseconds, e.g. `2026-11-21T08:00:00.000Z`.
pub fn fmt_time(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Stored JSON text back to a value.
pub fn parse_json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// Task ids in id order: `TEST-2` before `TEST-10`.
pub fn sort_ids(ids: &mut [String]) {
    ids.sort_by_cached_key(|id| match id.rsplit_once('-') {
        Some((prefix, n)) => (prefix.to_string(), n.parse::<i64>().unwrap_or(i64::MAX)),
        None => (id.clone(), 0),
    });
}

/// Where an item of a batch is named in errors: `subject` alone, `[2].subject` in a batch.
pub fn batch_field(batch_len: usize, i: usize, field: &str) -> String {
    if batch_len == 1 {
        field.to_string()
    } else {
        format!("[{i}].{field}")
    }
}

/// The size of a task batch.
pub fn check_task_batch(len: usize, limits: &Limits) -> StoreResult<()> {
    if len == 0 {
        return Err(StoreError::invalid("tasks", "the batch is empty"));
    }
    if len > limits.max_batch {
        return Err(StoreError::invalid(
            "tasks",
            format!(
                "a batch holds at most {} tasks, got {len}",
                limits.max_batch
            ),
        ));
    }
    Ok(())
}

/// A new task's fields, before any id is assigned.
pub fn validate_new_task(
    t: &NewTask,
    at: &dyn Fn(&str) -> String,
    limits: &Limits,
) -> StoreResult<()> {
    validate::text(&at("subject"), &t.subject, limits.max_subject_chars)?;
    if let Some(d) = &t.description {
        validate::optional_text(&at("description"), d, limits.max_text_chars)?;
    }
    if let Some(a) = &t.active_form {
        validate::optional_text(&at("activeForm"), a, limits.max_subject_chars)?;
    }
    if let Some(owner) = t.owner.as_deref().filter(|o| !o.is_empty()) {
        validate::name(&at("owner"), owner)?;
    }
    if let Some(m) = &t.metadata {
        validate::object(&at("metadata"), m)?;
        validate::depth(&at("metadata"), m, limits.max_json_depth)?;
    }
    if t.blocked_by.len() > limits.max_blocked_by {
        return Err(StoreError::invalid(
            &at("blockedBy"),
            format!(
                "a task may have at most {} blockers, got {}",
                limits.max_blocked_by,
                t.blocked_by.len()
            ),
        ));
    }
    if let Some(max) = t.max_attempts {
        if !(1..=MAX_ATTEMPTS_CEILING).contains(&max) {
            return Err(StoreError::invalid(
                &at("maxAttempts"),
                format!("`maxAttempts` must be between 1 and {MAX_ATTEMPTS_CEILING}"),
            ));
        }
    }
    Ok(())
}

/// How a new task gets its id: its explicit id (checked against `prefix` when both are given),
/// or the next number of its prefix, which the backend looks up.
pub enum IdRequest {
    Explicit(String, i64),
    Next(String),
}

pub fn id_request(t: &NewTask, at: &dyn Fn(&str) -> String) -> StoreResult<IdRequest> {
    match (&t.id, &t.prefix) {
        (Some(id), prefix) => {
            let (p, n) = validate::task_id(&at("id"), id)?;
            if let Some(prefix) = prefix {
                if validate::prefix(&at("prefix"), prefix)? != p {
                    return Err(StoreError::invalid(
                        &at("prefix"),
                        format!("id {id} does not start with prefix {prefix}"),
                    ));
                }
            }
            Ok(IdRequest::Explicit(p, n))
        }
        (None, Some(prefix)) => Ok(IdRequest::Next(validate::prefix(&at("prefix"), prefix)?)),
        (None, None) => Err(StoreError::invalid(
            &at("id"),
            "give the task an `id` (TEST-001) or a `prefix` (TEST)",
        )),
    }
}

pub fn duplicate_task(id: &str) -> StoreError {
    StoreError::Conflict {
        code: codes::DUPLICATE_ID,
        message: format!("task {id} already exists"),
        details: serde_json::json!({ "id": id }),
    }
}

/// The editable fields of a task, as a backend holds them while applying a patch.
pub struct EditableTask<'a> {
    pub subject: &'a mut String,
    pub description: &'a mut String,
    pub active_form: &'a mut Option<String>,
    pub owner: &'a mut Option<String>,
    /// Stored JSON text.
    pub metadata: &'a mut String,
}

/// Validates and applies a patch's plain fields (not status, not edges).
pub fn apply_patch_fields(
    task: EditableTask<'_>,
    patch: &mut TaskPatch,
    limits: &Limits,
) -> StoreResult<()> {
    if let Some(s) = patch.subject.take() {
        validate::text("subject", &s, limits.max_subject_chars)?;
        *task.subject = s;
    }
    if let Some(d) = patch.description.take() {
        validate::optional_text("description", &d, limits.max_text_chars)?;
        *task.description = d;
    }
    if let Some(a) = patch.active_form.take() {
        validate::optional_text("activeForm", &a, limits.max_subject_chars)?;
        *task.active_form = Some(a);
    }
    if let Some(owner) = patch.owner.take() {
        let owner = owner.filter(|o| !o.is_empty());
        if let Some(o) = &owner {
            validate::name("owner", o)?;
        }
        *task.owner = owner;
    }
    if let Some(m) = patch.metadata.take() {
        validate::object("metadata", &m)?;
        validate::depth("metadata", &m, limits.max_json_depth)?;
        let mut merged = parse_json(task.metadata);
        json_patch::merge(&mut merged, &m);
        *task.metadata = merged.to_string();
    }
    if patch.add_blocked_by.len() > limits.max_blocked_by {
        return Err(StoreError::invalid(
            "addBlockedBy",
            format!("a task may have at most {} blockers", limits.max_blocked_by),
        ));
    }
    Ok(())
}

/// After adding edges: the task's blocker count must stay within the limit.
pub fn check_blocker_count(count: usize, limits: &Limits) -> StoreResult<()> {
    if count > limits.max_blocked_by {
        return Err(StoreError::invalid(
            "addBlockedBy",
            format!(
                "a task may have at most {} blockers; this would make {count}",
                limits.max_blocked_by
            ),
        ));
    }
    Ok(())
}

/// A status set by hand must not strand a task: `in_progress` comes only from a claim, and
/// `completed` waits for every blocker (`waiting`, the ones not completed) unless forced.
pub fn check_hand_transition(
    id: &str,
    status: TaskStatus,
    force: bool,
    waiting: &[String],
) -> StoreResult<()> {
    if status == TaskStatus::InProgress {
        return Err(StoreError::conflict(
            codes::INVALID_TRANSITION,
            format!(
                "{id} cannot be set in_progress by hand: a task becomes in_progress when a worker \
                 claims it (POST …/tasks/claim), which gives it a holder and a lease"
            ),
        ));
    }
    if status != TaskStatus::Completed || force || waiting.is_empty() {
        return Ok(());
    }
    Err(StoreError::Conflict {
        code: codes::BLOCKED,
        message: format!(
            "{id} is blocked by {} that is not completed; complete it first, or send \"force\": true",
            waiting.join(", ")
        ),
        details: serde_json::json!({ "blockedBy": waiting }),
    })
}

/// Whether a hand-set status drops the live claim.
pub fn status_clears_claim(status: TaskStatus) -> bool {
    matches!(
        status,
        TaskStatus::Pending | TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
    )
}

pub fn is_closed(status: TaskStatus) -> bool {
    matches!(
        status,
        TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
    )
}

/// The holder may act on its claimed task; a coordinator may act on any open task when
/// `coordinator_may` is set (complete, fail) or on a claimed one (release, heartbeat).
pub fn ensure_holder(
    id: &str,
    status: TaskStatus,
    claimed_by: Option<&str>,
    caller: &Caller,
    coordinator_may: bool,
) -> StoreResult<()> {
    if is_closed(status) {
        return Err(StoreError::Conflict {
            code: codes::TASK_CLOSED,
            message: format!("task {id} is already {status}"),
            details: serde_json::json!({ "status": status }),
        });
    }
    let holds = status == TaskStatus::InProgress && claimed_by == Some(caller.agent.as_str());
    let coordinator =
        caller.role == Role::Coordinator && (coordinator_may || status == TaskStatus::InProgress);
    if holds || coordinator {
        return Ok(());
    }
    let message = match claimed_by {
        Some(holder) if status == TaskStatus::InProgress => {
            format!("task {id} is held by {holder}, not {}", caller.agent)
        }
        _ => format!("task {id} is not claimed by {}", caller.agent),
    };
    Err(StoreError::Conflict {
        code: codes::NOT_HOLDER,
        message,
        details: serde_json::json!({ "claimedBy": claimed_by, "status": status }),
    })
}

/// What an expired lease does: back to `pending` with one more attempt, or `failed` (with the
/// reason) once the attempts are used up. Returns the new status, attempts and reason.
pub fn lease_expiry(
    holder: &str,
    expired_at_ms: Option<i64>,
    attempts: i64,
    max_attempts: i64,
) -> (TaskStatus, i64, Option<String>) {
    let attempts = attempts + 1;
    if attempts >= max_attempts {
        let at = expired_at_ms.map(fmt_time).unwrap_or_default();
        let reason = format!(
            "lease held by {holder} expired at {at}; {attempts} of {max_attempts} attempts used"
        );
        (TaskStatus::Failed, attempts, Some(reason))
    } else {
        (TaskStatus::Pending, attempts, None)
    }
}

/// What `fail` does: the attempt counts; with attempts left and not `final_`, the task goes back
/// to `pending` for another try, otherwise it becomes `failed`. Returns the new status and
/// attempts; the event is `task.retried` or `task.failed` to match.
pub fn failure(attempts: i64, max_attempts: i64, final_: bool) -> (TaskStatus, i64, &'static str) {
    let attempts = attempts + 1;
    if final_ || attempts >= max_attempts {
        (TaskStatus::Failed, attempts, "task.failed")
    } else {
        (TaskStatus::Pending, attempts, "task.retried")
    }
}

pub fn self_blocking(task: &str, field: &str) -> StoreError {
    StoreError::invalid(field, format!("task {task} cannot block itself"))
}

pub fn unknown_blocker(blocker: &str, field: &str) -> StoreError {
    StoreError::Invalid {
        field: field.to_string(),
        message: format!("unknown blocker task {blocker}"),
        details: serde_json::json!({ "unknownTask": blocker }),
    }
}

/// `path` runs from `blocker` along `blockedBy` edges to `task`.
pub fn dependency_cycle(task: &str, blocker: &str, path: Vec<String>) -> StoreError {
    let mut names = vec![task.to_string()];
    names.extend(path);
    StoreError::Conflict {
        code: codes::DEPENDENCY_CYCLE,
        message: format!(
            "adding {blocker} as a blocker of {task} would close a cycle: {}",
            names.join(" → ")
        ),
        details: serde_json::json!({ "cycle": names }),
    }
}
/// Checks `if_match` against the current version.
pub fn check_version(if_match: Option<i64>, current: i64) -> StoreResult<()> {
    match if_match {
        Some(expected) if expected != current => {
            Err(StoreError::StaleVersion { expected, current })
        }
        _ => Ok(()),
    }
}

/// The JSON an event is streamed as; its `data` is already JSON text.
pub fn event_json(seq: i64, kind: &str, data: &str, created_at_ms: i64) -> StoreResult<String> {
    let kind_json = serde_json::to_string(kind).map_err(|e| StoreError::Internal(e.to_string()))?;
    Ok(format!(
        r#"{{"seq":{seq},"type":{kind_json},"data":{data},"createdAt":"{}"}}"#,
        fmt_time(created_at_ms)
    ))
}
