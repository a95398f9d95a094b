//! The mutable state of one task as stored, loaded for a change and saved back in one statement.

use super::super::{StoreError, StoreResult};
use super::deps;
use super::rows::{append_event, fmt_time, load_edges, parse_json};
use super::writer::WriteCtx;
use crate::hub::Publish;
use huddle_wire::{Task, TaskStatus};
use rusqlite::{params, OptionalExtension};

/// The columns [`TaskState::from_row`] reads, in order.
pub const STATE_COLUMNS: &str = "id, subject, description, active_form, status, owner, claimed_by,
    lease_expires_at, attempts, max_attempts, metadata, result, failure_reason, version, created_at";

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
    /// The status when loaded, so [`TaskState::save`] can keep dependents' counters right.
    loaded_status: TaskStatus,
}

impl TaskState {
    /// The task as sent on the wire, built from this state plus its edges (no re-read).
    fn to_task(&self, ctx: &WriteCtx<'_>) -> StoreResult<Task> {
        let mut task = Task {
            id: self.id.clone(),
            subject: self.subject.clone(),
            description: self.description.clone(),
            active_form: self.active_form.clone(),
            status: self.status,
            owner: self.owner.clone(),
            claimed_by: self.claimed_by.clone(),
            lease_expires_at: self.lease_expires_at.map(fmt_time),
            attempts: self.attempts,
            max_attempts: self.max_attempts,
            blocked_by: Vec::new(),
            blocks: Vec::new(),
            metadata: parse_json(&self.metadata),
            result: self.result.as_deref().map(parse_json),
            failure_reason: self.failure_reason.clone(),
            version: self.version,
            created_at: fmt_time(self.created_at),
            updated_at: fmt_time(ctx.now_ms),
        };
        load_edges(ctx.conn, self.team_id, &mut task)?;
        Ok(task)
    }

    pub fn load(ctx: &WriteCtx<'_>, team_id: i64, id: &str) -> StoreResult<TaskState> {
        ctx.conn
            .prepare_cached(&format!(
                "select {STATE_COLUMNS} from tasks where team_id = ?1 and id = ?2"
            ))?
            .query_row(params![team_id, id], |r| TaskState::from_row(team_id, r))
            .optional()?
            .ok_or_else(|| StoreError::not_found(format!("task {id}")))
    }

    /// A row selected with [`STATE_COLUMNS`].
    pub fn from_row(team_id: i64, r: &rusqlite::Row<'_>) -> rusqlite::Result<TaskState> {
        let status = super::rows::status_at(r, 4)?;
        Ok(TaskState {
            team_id,
            id: r.get(0)?,
            subject: r.get(1)?,
            description: r.get(2)?,
            active_form: r.get(3)?,
            status,
            owner: r.get(5)?,
            claimed_by: r.get(6)?,
            lease_expires_at: r.get(7)?,
            attempts: r.get(8)?,
            max_attempts: r.get(9)?,
            metadata: r.get(10)?,
            result: r.get(11)?,
            failure_reason: r.get(12)?,
            version: r.get(13)?,
            created_at: r.get(14)?,
            loaded_status: status,
        })
    }

    /// Drops the live claim (holder and lease); attempts are history and stay.
    pub fn clear_claim(&mut self) {
        self.claimed_by = None;
        self.lease_expires_at = None;
    }

    /// Writes the state back with a new version, keeps dependents' unmet counters in step with a
    /// change into or out of `completed`, records `event`, and returns the task as sent on the wire.
    pub fn save(mut self, ctx: &mut WriteCtx<'_>, event: &str) -> StoreResult<Task> {
        if !matches!(self.status, TaskStatus::InProgress) {
            self.lease_expires_at = None;
        }
        self.version += 1;
        ctx.conn
            .prepare_cached(
                "update tasks set subject = ?3, description = ?4, active_form = ?5, status = ?6, owner = ?7,
                        claimed_by = ?8, lease_expires_at = ?9, attempts = ?10, metadata = ?11, result = ?12,
                        failure_reason = ?13, version = ?14, updated_at = ?15
                 where team_id = ?1 and id = ?2",
            )?
            .execute(params![
                self.team_id,
                self.id,
                self.subject,
                self.description,
                self.active_form,
                self.status.as_str(),
                self.owner,
                self.claimed_by,
                self.lease_expires_at,
                self.attempts,
                self.metadata,
                self.result,
                self.failure_reason,
                self.version,
                ctx.now_ms
            ])?;
        let was_done = self.loaded_status == TaskStatus::Completed;
        let is_done = self.status == TaskStatus::Completed;
        // The wire task carries `blocks`, the dependents: with none, no counter to adjust.
        let task = self.to_task(ctx)?;
        if was_done != is_done && !task.blocks.is_empty() {
            let unblocked = deps::adjust_dependents(
                ctx.conn,
                self.team_id,
                &self.id,
                if is_done { -1 } else { 1 },
            )?;
            for ready in unblocked {
                ctx.publish(self.team_id, Publish::TaskReady(ready));
            }
        }
        append_event(ctx, self.team_id, event, &task)?;
        // Only a task saved as pending can be left ready; claims and completions skip the read.
        if self.status == TaskStatus::Pending {
            if let Some(ready) = deps::ready_task(ctx.conn, self.team_id, &self.id)? {
                ctx.publish(self.team_id, Publish::TaskReady(ready));
            }
        }
        Ok(task)
    }
}
