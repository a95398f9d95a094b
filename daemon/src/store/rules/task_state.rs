//! One task as stored, and every transition it can make: created, claimed, heartbeat, completed,
//! failed (retried or for good), released, expired, set by hand (reopened, cancelled…), saved.
//! Backends decode a row into a [`TaskState`], call one transition, and write the fields back
//! with their own SQL; the rules themselves are written here once.

use super::{fmt_time, parse_json};
use crate::store::error::{StoreError, StoreResult};
use crate::store::types::Caller;
use huddle_wire::codes;
use huddle_wire::{NewTask, Role, Task, TaskStatus};

/// The task columns, in the order every backend's row decoder reads them.
pub const STATE_COLUMNS: &str = "id, subject, description, active_form, status, owner, claimed_by,
    lease_expires_at, attempts, max_attempts, metadata, result, failure_reason, version, created_at,
    updated_at";

/// A task's `blockedBy` and `blocks`, each in id order.
pub type TaskEdges = (Vec<String>, Vec<String>);

/// The stored fields of one task (times in ms since the epoch, JSON as text).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskState {
    pub team_id: i64,
    pub id: String,
    pub subject: String,
    pub description: String,
    pub active_form: Option<String>,
    pub status: TaskStatus,
    pub owner: Option<String>,
    pub claimed_by: Option<String>,
    pub lease_expires_at: Option<i64>,
    pub attempts: i64,
    pub max_attempts: i64,
    pub metadata: String,
    pub result: Option<String>,
    pub failure_reason: Option<String>,
    pub version: i64,
    pub created_at: i64,
    pub updated_at: i64,
    /// The status when loaded (a decoder sets it to `status`): saving a change into or out of
    /// `completed` adjusts the dependents' unmet-blocker counters.
    pub loaded_status: TaskStatus,
    /// [`TaskState::stored_bytes`] when loaded: SQLite's writer counts a save's change of size
    /// into the team's usage (`store/sqlite/writer.rs`, `UsageDelta`).
    pub loaded_bytes: i64,
}

impl TaskState {
    /// A new task: pending, version 1, no attempt used.
    pub fn created(
        team_id: i64,
        id: String,
        t: &NewTask,
        default_max_attempts: i64,
        now: i64,
    ) -> TaskState {
        TaskState {
            team_id,
            id,
            subject: t.subject.clone(),
            description: t.description.clone().unwrap_or_default(),
            active_form: t.active_form.clone(),
            status: TaskStatus::Pending,
            owner: t.owner.clone().filter(|o| !o.is_empty()),
            claimed_by: None,
            lease_expires_at: None,
            attempts: 0,
            max_attempts: t.max_attempts.unwrap_or(default_max_attempts),
            metadata: t
                .metadata
                .clone()
                .unwrap_or_else(|| serde_json::json!({}))
                .to_string(),
            result: None,
            failure_reason: None,
            version: 1,
            created_at: now,
            updated_at: now,
            loaded_status: TaskStatus::Pending,
            loaded_bytes: 0,
        }
        .as_loaded()
    }

    /// Marks the state as it is stored: what a decoder returns and a new task starts from.
    pub fn as_loaded(mut self) -> Self {
        self.loaded_status = self.status;
        self.loaded_bytes = self.stored_bytes();
        self
    }

    /// The bytes of text the task stores, as `team_usage.storage_bytes` counts them
    /// (`octet_length` of each text column).
    pub fn stored_bytes(&self) -> i64 {
        let opt = |s: &Option<String>| s.as_ref().map_or(0, String::len);
        (self.subject.len()
            + self.description.len()
            + opt(&self.active_form)
            + self.metadata.len()
            + opt(&self.result)
            + opt(&self.failure_reason)) as i64
    }

    /// Taken by `agent` until `now + lease_ms`.
    pub fn claim(&mut self, agent: &str, now: i64, lease_ms: u64) {
        self.status = TaskStatus::InProgress;
        self.claimed_by = Some(agent.to_string());
        self.lease_expires_at = Some(lease_until(now, lease_ms));
    }

    /// The holder (or a coordinator) extends the lease. Saved apart: only the lease and the
    /// version change, and no event is recorded.
    pub fn heartbeat(&mut self, caller: &Caller, now: i64, lease_ms: u64) -> StoreResult<()> {
        self.ensure_holder(caller, false)?;
        // The holder's heartbeat never shortens its lease: waiting on a person's answer, it
        // keeps the lease its question gave it however often it heartbeats meanwhile. A
        // coordinator sets the lease as asked (shortening it hands the task back sooner).
        let until = lease_until(now, lease_ms);
        let holder = self.claimed_by.as_deref() == Some(caller.agent.as_str());
        self.lease_expires_at = match self.lease_expires_at {
            Some(at) if holder => Some(at.max(until)),
            _ => Some(until),
        };
        self.version += 1;
        self.updated_at = now;
        Ok(())
    }

    /// Done, with the worker's result (JSON text).
    pub fn complete(&mut self, caller: &Caller, result: Option<String>) -> StoreResult<()> {
        self.ensure_holder(caller, true)?;
        // A task that asks for evidence completes only with a result whose evidence the HTTP
        // layer checked (`http/evidence.rs` marks it; a client's own mark is replaced there).
        if self.metadata.contains("requireEvidence") && !evidence_checked(&self.metadata, &result) {
            return Err(StoreError::conflict(
                codes::EVIDENCE_REQUIRED,
                format!(
                    "task {} completes only with evidence: `result.evidence` must name the test \
                     run that verified it (`runId`, `project`, `tree`; the run posted with \
                     `task: \"{}\"`)",
                    self.id, self.id
                ),
            ));
        }
        self.status = TaskStatus::Completed;
        self.result = result;
        self.lease_expires_at = None;
        Ok(())
    }

    /// The attempt counts; back to `pending` while attempts remain and not `final_`, else
    /// `failed` ([`failure`]). Returns the event to record. A failed task keeps its last
    /// holder, as a completed one does; a retried one has none.
    pub fn fail(
        &mut self,
        caller: &Caller,
        reason: String,
        final_: bool,
        result: Option<String>,
    ) -> StoreResult<&'static str> {
        self.ensure_holder(caller, true)?;
        if result.is_some() {
            self.result = result;
        }
        let (status, attempts, event) = failure(self.attempts, self.max_attempts, final_);
        self.status = status;
        self.attempts = attempts;
        self.failure_reason = Some(reason);
        self.lease_expires_at = None;
        if status == TaskStatus::Pending {
            self.clear_claim();
        }
        Ok(event)
    }

    /// Back to the queue without counting an attempt.
    pub fn release(&mut self, caller: &Caller) -> StoreResult<()> {
        self.ensure_holder(caller, false)?;
        self.status = TaskStatus::Pending;
        self.clear_claim();
        Ok(())
    }

    /// The lease ran out: back to `pending` with one more attempt, or `failed` once the
    /// attempts are used up ([`lease_expiry`]).
    pub fn expire(&mut self) {
        let holder = self.claimed_by.clone().unwrap_or_default();
        let (status, attempts, reason) = lease_expiry(
            &holder,
            self.lease_expires_at,
            self.attempts,
            self.max_attempts,
        );
        self.clear_claim();
        self.status = status;
        self.attempts = attempts;
        if reason.is_some() {
            self.failure_reason = reason;
        }
    }

    /// A status set by hand (a patch): reopening, cancelling, completing or failing. `waiting`
    /// are the blockers not completed, read only when `status` is `completed` and not `force`.
    pub fn set_status(
        &mut self,
        status: TaskStatus,
        force: bool,
        waiting: &[String],
    ) -> StoreResult<()> {
        if status == self.status {
            return Ok(());
        }
        check_hand_transition(&self.id, status, force, waiting)?;
        if status_clears_claim(status) {
            self.clear_claim();
        }
        if status != TaskStatus::Failed {
            self.failure_reason = None;
        }
        self.status = status;
        Ok(())
    }

    /// Whether a hand-set `status` needs the blockers not completed ([`TaskState::set_status`]).
    pub fn needs_waiting(&self, status: TaskStatus, force: bool) -> bool {
        status != self.status && status == TaskStatus::Completed && !force
    }

    /// The holder may act on its claimed task; see [`ensure_holder`].
    pub fn ensure_holder(&self, caller: &Caller, coordinator_may: bool) -> StoreResult<()> {
        ensure_holder(
            &self.id,
            self.status,
            self.claimed_by.as_deref(),
            caller,
            coordinator_may,
        )
    }

    /// Drops the live claim (holder and lease); attempts are history and stay.
    pub fn clear_claim(&mut self) {
        self.claimed_by = None;
        self.lease_expires_at = None;
    }

    /// The save rules, before a backend writes the fields: a lease only while in progress, one
    /// version more, updated now.
    pub fn prepare_save(&mut self, now: i64) {
        if self.status != TaskStatus::InProgress {
            self.lease_expires_at = None;
        }
        self.version += 1;
        self.updated_at = now;
    }

    /// How the dependents' unmet-blocker counters move when this state is saved: `-1` when it
    /// entered `completed`, `+1` when it left it, `None` otherwise.
    pub fn dependents_delta(&self) -> Option<i64> {
        let was = self.loaded_status == TaskStatus::Completed;
        let is = self.status == TaskStatus::Completed;
        (was != is).then_some(if is { -1 } else { 1 })
    }

    /// Only a task saved as pending can be left ready to claim; claims and completions skip
    /// the readiness read.
    pub fn may_be_ready(&self) -> bool {
        self.status == TaskStatus::Pending
    }

    /// The task as sent on the wire, with its edges.
    pub fn into_task(self, edges: TaskEdges) -> Task {
        let (blocked_by, blocks) = edges;
        Task {
            id: self.id,
            subject: self.subject,
            description: self.description,
            active_form: self.active_form,
            status: self.status,
            owner: self.owner,
            claimed_by: self.claimed_by,
            lease_expires_at: self.lease_expires_at.map(fmt_time),
            attempts: self.attempts,
            max_attempts: self.max_attempts,
            blocked_by,
            blocks,
            metadata: parse_json(&self.metadata),
            result: self.result.as_deref().map(parse_json),
            failure_reason: self.failure_reason,
            version: self.version,
            created_at: fmt_time(self.created_at),
            updated_at: fmt_time(self.updated_at),
            gates: Vec::new(),
            traceparent: None,
        }
    }
}

pub fn lease_until(now: i64, lease_ms: u64) -> i64 {
    now.saturating_add(i64::try_from(lease_ms).unwrap_or(i64::MAX))
}

/// A task is ready to claim when it is pending and none of its blockers is left open
/// (`unmet_blockers`, kept by the backends). The claim queries select exactly this
/// (`status = 'pending' and unmet_blockers = 0`).
pub fn is_ready(status: TaskStatus, unmet_blockers: i64) -> bool {
    status == TaskStatus::Pending && unmet_blockers == 0
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
    // Capped: a task reopened by hand after its last attempt stays within its attempts.
    let attempts = (attempts + 1).min(max_attempts);
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
    let attempts = (attempts + 1).min(max_attempts);
    if final_ || attempts >= max_attempts {
        (TaskStatus::Failed, attempts, "task.failed")
    } else {
        (TaskStatus::Pending, attempts, "task.retried")
    }
}

/// Whether the metadata does not require evidence, or the result's evidence carries the HTTP
/// layer's mark (`evidence.checked.by`).
fn evidence_checked(metadata: &str, result: &Option<String>) -> bool {
    let required = serde_json::from_str::<serde_json::Value>(metadata)
        .ok()
        .and_then(|m| {
            m.get("requireEvidence")
                .and_then(serde_json::Value::as_bool)
        })
        == Some(true);
    if !required {
        return true;
    }
    result
        .as_deref()
        .and_then(|r| serde_json::from_str::<serde_json::Value>(r).ok())
        .and_then(|r| {
            r.pointer("/evidence/checked/by")
                .and_then(serde_json::Value::as_str)
                .map(|by| by == "huddled")
        })
        == Some(true)
}

#[cfg(test)]
#[path = "task_state_props.rs"]
mod props;
