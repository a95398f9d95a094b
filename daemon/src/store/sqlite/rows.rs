//! Row ↔ wire mapping and the small helpers every area shares (time format, event append).

use super::super::error::{StoreError, StoreResult};
use super::super::rules;
use super::writer::WriteCtx;
use crate::hub::{Publish, StreamItem};
use huddle_wire::{Event, Message, Task, TaskStatus};
use rusqlite::{params, Connection, OptionalExtension, Row};
use std::sync::Arc;

pub use super::super::rules::{fmt_time, parse_json};
use super::super::rules::{TaskEdges, TaskState, STATE_COLUMNS};

/// A task's project in SQL: its metadata `project` when a string, else null (as
/// `rules::project::of_metadata` reads it).
pub const TASK_PROJECT: &str = "(case when json_type(metadata, '$.project') = 'text'
    then json_extract(metadata, '$.project') end)";

/// The task status in column `index`. A value no version of huddle writes is a corrupt row:
/// an error, never silently read as `pending` (which would hand the task out again).
pub fn status_at(row: &Row<'_>, index: usize) -> rusqlite::Result<TaskStatus> {
    let text: String = row.get(index)?;
    TaskStatus::parse(&text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            index,
            rusqlite::types::Type::Text,
            format!("unknown task status {text:?} in the database").into(),
        )
    })
}

/// A row selected with [`STATE_COLUMNS`] (the columns in that order).
pub fn state_from_row(team_id: i64, r: &Row<'_>) -> rusqlite::Result<TaskState> {
    let status = status_at(r, 4)?;
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
        updated_at: r.get(15)?,
        loaded_status: status,
        loaded_bytes: 0,
    }
    .as_loaded())
}

/// A task's `blockedBy` and `blocks` (one query for both), each in id order (`TEST-2` before
/// `TEST-10`). Sorted here rather than in SQL: an `order by` on the joined task table tempts the
/// planner into walking every task.
pub fn edges_of(conn: &Connection, team_id: i64, id: &str) -> StoreResult<TaskEdges> {
    let mut edges = conn.prepare_cached(
        "select blocker_id, 0 from task_deps where team_id = ?1 and task_id = ?2
         union all
         select task_id, 1 from task_deps where team_id = ?1 and blocker_id = ?2",
    )?;
    let mut rows = edges.query(params![team_id, id])?;
    let (mut blocked_by, mut blocks) = (Vec::new(), Vec::new());
    while let Some(row) = rows.next()? {
        let id: String = row.get(0)?;
        if row.get::<_, i64>(1)? == 0 {
            blocked_by.push(id);
        } else {
            blocks.push(id);
        }
    }
    rules::sort_ids(&mut blocked_by);
    rules::sort_ids(&mut blocks);
    Ok((blocked_by, blocks))
}

/// A task's stored state, or `None`.
pub fn find_state(conn: &Connection, team_id: i64, id: &str) -> StoreResult<Option<TaskState>> {
    Ok(conn
        .prepare_cached(&format!(
            "select {STATE_COLUMNS} from tasks where team_id = ?1 and id = ?2"
        ))?
        .query_row(params![team_id, id], |r| state_from_row(team_id, r))
        .optional()?)
}

/// A task's stored state; `NotFound` when absent.
pub fn load_state(conn: &Connection, team_id: i64, id: &str) -> StoreResult<TaskState> {
    find_state(conn, team_id, id)?.ok_or_else(|| StoreError::not_found(format!("task {id}")))
}

/// A task as sent on the wire, with its edges.
pub fn load_task(conn: &Connection, team_id: i64, id: &str) -> StoreResult<Task> {
    let state = load_state(conn, team_id, id)?;
    let edges = edges_of(conn, team_id, id)?;
    Ok(state.into_task(edges))
}

pub const MESSAGE_COLUMNS: &str = "seq, id, sender, recipient, type, summary, data, created_at";

pub fn message_from_row(row: &Row<'_>) -> rusqlite::Result<Message> {
    Ok(Message {
        seq: row.get(0)?,
        id: row.get(1)?,
        from: row.get(2)?,
        to: row.get(3)?,
        kind: row.get(4)?,
        summary: row.get(5)?,
        data: parse_json(&row.get::<_, String>(6)?),
        created_at: fmt_time(row.get(7)?),
    })
}

pub fn event_from_row(row: &Row<'_>) -> rusqlite::Result<Event> {
    let kind: String = row.get(1)?;
    Ok(Event {
        seq: row.get(0)?,
        data: rules::task_event::value(&kind, &row.get::<_, String>(2)?),
        created_at: fmt_time(row.get(3)?),
        kind,
    })
}

/// Appends an event to the team's log and queues it for the hub after commit. The data is
/// serialised once; the stored row and the streamed event share that text.
pub fn append_event(
    ctx: &mut WriteCtx<'_>,
    team_id: i64,
    kind: &str,
    data: &impl serde::Serialize,
) -> StoreResult<()> {
    let data = serde_json::to_string(data).map_err(|e| StoreError::Internal(e.to_string()))?;
    append_event_json(ctx, team_id, kind, data)
}

/// [`append_event`] for data already serialised to JSON text.
pub fn append_event_json(
    ctx: &mut WriteCtx<'_>,
    team_id: i64,
    kind: &str,
    data: String,
) -> StoreResult<()> {
    let seq = insert_event(ctx, team_id, kind, &data)?;
    let (owned_kind, created_at) = (kind.to_string(), ctx.now_ms);
    let item = StreamItem::lazy(seq, kind.to_string(), move || {
        rules::event_json(seq, &owned_kind, &data, created_at)
    });
    ctx.publish(team_id, Publish::Event(Arc::new(item)));
    Ok(())
}

/// Appends a `task.*` event, its data stored without field names (`rules::task_event`); a
/// stream that sends it expands it on its own thread.
pub fn append_task_event(
    ctx: &mut WriteCtx<'_>,
    team_id: i64,
    kind: &str,
    task: &Task,
) -> StoreResult<()> {
    let data = rules::task_event::pack(task);
    let seq = insert_event(ctx, team_id, kind, &data)?;
    let (owned_kind, created_at) = (kind.to_string(), ctx.now_ms);
    let item = StreamItem::lazy(seq, kind.to_string(), move || {
        let data = rules::task_event::expanded(&owned_kind, &data);
        rules::event_json(seq, &owned_kind, &data, created_at)
    });
    ctx.publish(team_id, Publish::Event(Arc::new(item)));
    Ok(())
}

fn insert_event(ctx: &mut WriteCtx<'_>, team_id: i64, kind: &str, data: &str) -> StoreResult<i64> {
    let seq = ctx.next_event_seq(team_id)?;
    ctx.conn
        .prepare_cached(
            "insert into events (team_id, seq, type, data, created_at) values (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(params![team_id, seq, kind, data, ctx.now_ms])?;
    Ok(seq)
}

/// Marks the agent as seen now (claims, heartbeats and posts count as signs of life). At most
/// one write per agent per second: `lastSeenAt` is a liveness hint, not an audit log.
pub fn touch_agent(ctx: &mut WriteCtx<'_>, team_id: i64, agent: &str) -> StoreResult<()> {
    if !ctx.should_touch(team_id, agent) {
        return Ok(());
    }
    ctx.conn
        .prepare_cached("update agents set last_seen_at = ?3 where team_id = ?1 and name = ?2")?
        .execute(params![team_id, agent, ctx.now_ms])?;
    Ok(())
}
