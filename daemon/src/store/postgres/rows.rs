//! Row ↔ wire mapping and the helpers every area shares (event append).

use super::super::error::{StoreError, StoreResult};
use super::super::rules::{fmt_time, parse_json, STATE_COLUMNS};
use super::db::Db;
use super::task_state::{edges_from_row, state_from_row, EDGE_COLUMNS};
use super::tx::Tx;
use huddle_wire::{Event, Message, Task, TaskStatus};
use sqlx::postgres::PgRow;
use sqlx::Row;

/// A task's project in SQL: its metadata `project` when a string, else null (as
/// `rules::project::of_metadata` reads it).
pub const TASK_PROJECT: &str = "(case when jsonb_typeof(metadata::jsonb -> 'project') = 'string'
    then metadata::jsonb ->> 'project' end)";

/// A status no version of huddle writes is a corrupt row: an error, never read as `pending`.
pub fn status_of(row: &PgRow, column: &str) -> Result<TaskStatus, sqlx::Error> {
    let text: String = row.try_get(column)?;
    TaskStatus::parse(&text).ok_or_else(|| sqlx::Error::ColumnDecode {
        index: column.into(),
        source: format!("unknown task status {text:?} in the database").into(),
    })
}

/// A task as sent on the wire, with its edges, or `None`.
pub async fn find_task(conn: Db<'_>, team_id: i64, id: &str) -> StoreResult<Option<Task>> {
    let row = sqlx::query(&format!(
        "select {STATE_COLUMNS}, {EDGE_COLUMNS} from tasks where team_id = $1 and id = $2"
    ))
    .bind(team_id)
    .bind(id)
    .fetch_optional(conn)
    .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    Ok(Some(
        state_from_row(team_id, &row)?.into_task(edges_from_row(&row)?),
    ))
}

pub async fn load_task(conn: Db<'_>, team_id: i64, id: &str) -> StoreResult<Task> {
    find_task(conn, team_id, id)
        .await?
        .ok_or_else(|| StoreError::not_found(format!("task {id}")))
}

pub const MESSAGE_COLUMNS: &str = "seq, id, sender, recipient, type, summary, data, created_at";

pub fn message_from_row(row: &PgRow) -> Result<Message, sqlx::Error> {
    Ok(Message {
        seq: row.try_get("seq")?,
        id: row.try_get("id")?,
        from: row.try_get("sender")?,
        to: row.try_get("recipient")?,
        kind: row.try_get("type")?,
        summary: row.try_get("summary")?,
        data: parse_json(&row.try_get::<String, _>("data")?),
        created_at: fmt_time(row.try_get("created_at")?),
    })
}

pub fn event_from_row(row: &PgRow) -> Result<Event, sqlx::Error> {
    Ok(Event {
        seq: row.try_get("seq")?,
        kind: row.try_get("type")?,
        data: parse_json(&row.try_get::<String, _>("data")?),
        created_at: fmt_time(row.try_get("created_at")?),
    })
}

/// Appends an event to the team's log (the team must be locked); it is inserted on commit and
/// the listeners stream it to subscribers once the transaction commits.
pub fn append_event(
    tx: &mut Tx,
    team_id: i64,
    kind: &str,
    data: &impl serde::Serialize,
) -> StoreResult<()> {
    let data = serde_json::to_string(data).map_err(|e| StoreError::Internal(e.to_string()))?;
    tx.append_event(team_id, kind, data);
    Ok(())
}
