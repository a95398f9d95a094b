//! Row ↔ wire mapping and the helpers every area shares (event append).

use super::super::rules::{self, fmt_time, parse_json};
use super::super::{StoreError, StoreResult};
use super::tx::Tx;
use huddle_wire::{Event, Message, Task, TaskStatus};
use sqlx::postgres::PgRow;
use sqlx::{PgConnection, Row};

pub const TASK_COLUMNS: &str =
    "id, subject, description, active_form, status, owner, claimed_by, lease_expires_at,
     attempts, max_attempts, metadata, result, failure_reason, version, created_at, updated_at";

/// A status no version of huddle writes is a corrupt row: an error, never read as `pending`.
pub fn status_of(row: &PgRow, column: &str) -> Result<TaskStatus, sqlx::Error> {
    let text: String = row.try_get(column)?;
    TaskStatus::parse(&text).ok_or_else(|| sqlx::Error::ColumnDecode {
        index: column.into(),
        source: format!("unknown task status {text:?} in the database").into(),
    })
}

/// A task row without its edges (`blockedBy`/`blocks` come from [`load_edges`]).
pub fn task_from_row(row: &PgRow) -> Result<Task, sqlx::Error> {
    let result: Option<String> = row.try_get("result")?;
    Ok(Task {
        id: row.try_get("id")?,
        subject: row.try_get("subject")?,
        description: row.try_get("description")?,
        active_form: row.try_get("active_form")?,
        status: status_of(row, "status")?,
        owner: row.try_get("owner")?,
        claimed_by: row.try_get("claimed_by")?,
        lease_expires_at: row
            .try_get::<Option<i64>, _>("lease_expires_at")?
            .map(fmt_time),
        attempts: row.try_get("attempts")?,
        max_attempts: row.try_get("max_attempts")?,
        blocked_by: Vec::new(),
        blocks: Vec::new(),
        metadata: parse_json(&row.try_get::<String, _>("metadata")?),
        result: result.as_deref().map(parse_json),
        failure_reason: row.try_get("failure_reason")?,
        version: row.try_get("version")?,
        created_at: fmt_time(row.try_get("created_at")?),
        updated_at: fmt_time(row.try_get("updated_at")?),
    })
}

/// Fills `blockedBy` and `blocks`, each in id order.
pub async fn load_edges(conn: &mut PgConnection, team_id: i64, task: &mut Task) -> StoreResult<()> {
    let rows: Vec<(String, bool)> = sqlx::query_as(
        "select blocker_id, false from task_deps where team_id = $1 and task_id = $2
         union all
         select task_id, true from task_deps where team_id = $1 and blocker_id = $2",
    )
    .bind(team_id)
    .bind(&task.id)
    .fetch_all(&mut *conn)
    .await?;
    task.blocked_by.clear();
    task.blocks.clear();
    for (id, is_dependent) in rows {
        if is_dependent {
            task.blocks.push(id);
        } else {
            task.blocked_by.push(id);
        }
    }
    rules::sort_ids(&mut task.blocked_by);
    rules::sort_ids(&mut task.blocks);
    Ok(())
}

pub async fn find_task(
    conn: &mut PgConnection,
    team_id: i64,
    id: &str,
) -> StoreResult<Option<Task>> {
    let row = sqlx::query(&format!(
        "select {TASK_COLUMNS} from tasks where team_id = $1 and id = $2"
    ))
    .bind(team_id)
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    let mut task = task_from_row(&row)?;
    load_edges(conn, team_id, &mut task).await?;
    Ok(Some(task))
}

pub async fn load_task(conn: &mut PgConnection, team_id: i64, id: &str) -> StoreResult<Task> {
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
