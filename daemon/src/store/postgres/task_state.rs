//! The mutable state of one task, loaded for a change and saved back in one statement.

use super::super::rules::{fmt_time, parse_json};
use super::super::{StoreError, StoreResult};
use super::deps;
use super::rows::{append_event, load_edges, status_of};
use super::tx::Tx;
use huddle_wire::{Task, TaskStatus};
use sqlx::postgres::PgRow;
use sqlx::Row;

/// The columns [`TaskState::from_row`] reads.
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
    loaded_status: TaskStatus,
}

impl TaskState {
    /// Loads a task of a team the transaction has locked.
    pub async fn load(tx: &mut Tx, team_id: i64, id: &str) -> StoreResult<TaskState> {
        let row = sqlx::query(&format!(
            "select {STATE_COLUMNS} from tasks where team_id = $1 and id = $2"
        ))
        .bind(team_id)
        .bind(id)
        .fetch_optional(tx.conn())
        .await?
        .ok_or_else(|| StoreError::not_found(format!("task {id}")))?;
        Ok(TaskState::from_row(team_id, &row)?)
    }

    pub fn from_row(team_id: i64, r: &PgRow) -> Result<TaskState, sqlx::Error> {
        let status = status_of(r, "status")?;
        Ok(TaskState {
            team_id,
            id: r.try_get("id")?,
            subject: r.try_get("subject")?,
            description: r.try_get("description")?,
            active_form: r.try_get("active_form")?,
            status,
            owner: r.try_get("owner")?,
            claimed_by: r.try_get("claimed_by")?,
            lease_expires_at: r.try_get("lease_expires_at")?,
            attempts: r.try_get("attempts")?,
            max_attempts: r.try_get("max_attempts")?,
            metadata: r.try_get("metadata")?,
            result: r.try_get("result")?,
            failure_reason: r.try_get("failure_reason")?,
            version: r.try_get("version")?,
            created_at: r.try_get("created_at")?,
            loaded_status: status,
        })
    }

    pub fn clear_claim(&mut self) {
        self.claimed_by = None;
        self.lease_expires_at = None;
    }

    /// Writes the state back with a new version, keeps dependents' unmet counters in step with a
    /// change into or out of `completed`, records `event`, and returns the wire task.
    pub async fn save(mut self, tx: &mut Tx, event: &str) -> StoreResult<Task> {
        if self.status != TaskStatus::InProgress {
            self.lease_expires_at = None;
        }
        self.version += 1;
        let now = tx.now_ms;
        sqlx::query(
            "update tasks set subject = $3, description = $4, active_form = $5, status = $6, owner = $7,
                    claimed_by = $8, lease_expires_at = $9, attempts = $10, metadata = $11, result = $12,
                    failure_reason = $13, version = $14, updated_at = $15
             where team_id = $1 and id = $2",
        )
        .bind(self.team_id)
        .bind(&self.id)
        .bind(&self.subject)
        .bind(&self.description)
        .bind(&self.active_form)
        .bind(self.status.as_str())
        .bind(&self.owner)
        .bind(&self.claimed_by)
        .bind(self.lease_expires_at)
        .bind(self.attempts)
        .bind(&self.metadata)
        .bind(&self.result)
        .bind(&self.failure_reason)
        .bind(self.version)
        .bind(now)
        .execute(tx.conn())
        .await?;
        let was_done = self.loaded_status == TaskStatus::Completed;
        let is_done = self.status == TaskStatus::Completed;
        let mut task = Task {
            id: self.id.clone(),
            subject: self.subject,
            description: self.description,
            active_form: self.active_form,
            status: self.status,
            owner: self.owner,
            claimed_by: self.claimed_by,
            lease_expires_at: self.lease_expires_at.map(fmt_time),
            attempts: self.attempts,
            max_attempts: self.max_attempts,
            blocked_by: Vec::new(),
            blocks: Vec::new(),
            metadata: parse_json(&self.metadata),
            result: self.result.as_deref().map(parse_json),
            failure_reason: self.failure_reason,
            version: self.version,
            created_at: fmt_time(self.created_at),
            updated_at: fmt_time(now),
        };
        load_edges(tx.conn(), self.team_id, &mut task).await?;
        if was_done != is_done && !task.blocks.is_empty() {
            deps::adjust_dependents(tx, self.team_id, &self.id, if is_done { -1 } else { 1 })
                .await?;
        }
        append_event(tx, self.team_id, event, &task).await?;
        if task.status == TaskStatus::Pending || was_done != is_done {
            tx.tasks_changed(self.team_id);
        }
        Ok(task)
    }
}
