//! Per-team settings and maintained counters: the admin's quota and retention overrides, and
//! what each team stores, read from the `team_usage` row the database's triggers keep in the
//! same transaction as every change (so `/metrics` and the quota checks never count rows, and
//! stay right across restarts, replicas, retention and team deletion). Both tables are keyed
//! by `team_id`: deleting a team deletes its rows.

use super::error::{StoreError, StoreResult};
use super::rules::quota::Quotas;
use async_trait::async_trait;
use huddle_wire::{TaskStatus, TeamQuestions, TeamRetention, TeamSettings, TeamUsage};

/// One team's counters: its tasks per status (in `TaskStatus::ALL` order) and its use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamCounters {
    pub team: String,
    pub tasks: [u64; 5],
    pub usage: TeamUsage,
}

impl TeamCounters {
    pub fn tasks_with(&self, status: TaskStatus) -> u64 {
        let i = TaskStatus::ALL
            .iter()
            .position(|s| *s == status)
            .expect("every status is in ALL");
        self.tasks[i]
    }
}

#[async_trait]
pub trait QuotaStore {
    /// The team's overrides and its current use.
    async fn team_settings(&self, team_id: i64) -> StoreResult<(TeamSettings, TeamUsage)>;
    /// Replaces the team's overrides (what is absent follows the configured default).
    async fn set_team_settings(&self, team_id: i64, settings: TeamSettings) -> StoreResult<()>;
    /// Every team's counters, by team name (for `/metrics`: one read of one row per team).
    async fn team_counters(&self) -> StoreResult<Vec<TeamCounters>>;
    /// Every team's retention overrides that set something, by team id (for the sweep).
    async fn retention_overrides(&self) -> StoreResult<Vec<(i64, TeamRetention)>>;
}

/// The quota limits the admin may set: a quota is a count or a byte size, at most 2^53 so
/// every client reads it exactly.
pub fn check_settings(settings: &TeamSettings) -> StoreResult<()> {
    const MAX: u64 = huddle_wire::MAX_SETTING;
    let q = &settings.quotas;
    let r = &settings.retention;
    let values = [
        ("quotas.maxTasks", q.max_tasks),
        ("quotas.maxEdges", q.max_edges),
        ("quotas.maxMessages", q.max_messages),
        ("quotas.maxStorageBytes", q.max_storage_bytes),
        (
            "retention.finishedTasksMaxAgeHours",
            r.finished_tasks_max_age_hours,
        ),
        ("retention.finishedTasksKept", r.finished_tasks_kept),
        ("retention.messagesMaxAgeHours", r.messages_max_age_hours),
        ("retention.messagesKept", r.messages_kept),
        ("retention.eventsMaxAgeHours", r.events_max_age_hours),
        ("retention.eventsKept", r.events_kept),
        ("retention.testRunsMaxAgeHours", r.test_runs_max_age_hours),
        ("retention.testRunsKept", r.test_runs_kept),
    ];
    for (field, value) in values {
        if value.is_some_and(|v| v > MAX) {
            return Err(StoreError::invalid(
                field,
                format!("{field} must be at most {MAX}"),
            ));
        }
    }
    let most = huddle_wire::MAX_QUESTION_WAIT_MINUTES;
    if let Some(wait) = settings.questions.max_wait_minutes {
        if !(1..=most).contains(&wait) {
            return Err(StoreError::invalid(
                "questions.maxWaitMinutes",
                format!(
                    "questions.maxWaitMinutes must be between 1 and {most} (a week), got {wait}"
                ),
            ));
        }
    }
    Ok(())
}

/// A stored quota column (SQL `bigint`/`integer`, null: the default).
pub fn quota_from_column(v: Option<i64>) -> Option<u64> {
    v.map(|v| v.max(0) as u64)
}

/// The retention overrides stored as JSON text (`'{}'`: none).
pub fn retention_from_text(text: &str) -> StoreResult<TeamRetention> {
    serde_json::from_str(text).map_err(|e| StoreError::Internal(format!("team retention: {e}")))
}

pub fn retention_to_text(r: &TeamRetention) -> String {
    serde_json::to_string(r).expect("retention serialises")
}

pub fn questions_from_text(text: &str) -> StoreResult<TeamQuestions> {
    serde_json::from_str(text).map_err(|e| StoreError::Internal(format!("team questions: {e}")))
}

pub fn questions_to_text(q: &TeamQuestions) -> String {
    serde_json::to_string(q).expect("question settings serialise")
}

/// Checks an import's `settings` record as the settings API checks the overrides; the error
/// is the record's problem in words (the caller names the line).
pub fn check_settings_record(r: &super::transfer::SettingsRecord) -> Result<(), String> {
    let quota = |field: &str, v: Option<i64>| match v {
        Some(v) if v < 0 => Err(format!("{field} is negative")),
        v => Ok(v.map(|v| v as u64)),
    };
    let settings = TeamSettings {
        quotas: huddle_wire::TeamQuotas {
            max_tasks: quota("maxTasks", r.max_tasks)?,
            max_edges: quota("maxEdges", r.max_edges)?,
            max_messages: quota("maxMessages", r.max_messages)?,
            max_storage_bytes: quota("maxStorageBytes", r.max_storage_bytes)?,
        },
        retention: serde_json::from_str(r.retention.get())
            .map_err(|e| format!("retention: {e}"))?,
        questions: serde_json::from_str(r.questions.get())
            .map_err(|e| format!("questions: {e}"))?,
    };
    check_settings(&settings).map_err(|e| e.to_string())
}

/// The quotas in force, as the wire shows them.
pub fn effective(limits: &crate::config::LimitSettings, settings: &TeamSettings) -> Quotas {
    Quotas::effective(limits, &settings.quotas)
}
