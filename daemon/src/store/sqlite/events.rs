//! Reading the team's event log (appending is `rows::append_event`, inside each change).

use super::super::error::{StoreError, StoreResult};
use super::super::rules::task_event;
use super::super::types::StreamCursors;
use super::rows::event_from_row;
use huddle_wire::Event;
use rusqlite::{params, Connection, OptionalExtension};

pub fn list(conn: &Connection, team_id: i64, after: i64, limit: usize) -> StoreResult<Vec<Event>> {
    let mut stmt = conn.prepare_cached(
        "select seq, type, data, created_at from events where team_id = ?1 and seq > ?2 order by seq limit ?3",
    )?;
    let rows = stmt.query_map(
        params![team_id, after, limit.clamp(1, 10_000) as i64],
        event_from_row,
    )?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// One task's `task.*` events (each carries the task as it became), newest first.
pub fn for_task(
    conn: &Connection,
    team_id: i64,
    task_id: &str,
    limit: usize,
) -> StoreResult<Vec<Event>> {
    let mut stmt = conn.prepare_cached(&format!(
        "select seq, type, data, created_at from events
         where team_id = ?1 and type like 'task.%' and {id} = ?2
         order by seq desc limit ?3",
        id = task_event::STORED_TASK_ID
    ))?;
    let rows = stmt.query_map(
        params![team_id, task_id, limit.clamp(1, 1_000) as i64],
        event_from_row,
    )?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The team's newest event and message `seq`.
pub fn cursors(conn: &Connection, team_id: i64) -> StoreResult<StreamCursors> {
    conn.prepare_cached("select event_seq, msg_seq from team_seqs where team_id = ?1")?
        .query_row(params![team_id], |r| {
            Ok(StreamCursors {
                events: r.get(0)?,
                messages: r.get(1)?,
            })
        })
        .optional()?
        .ok_or_else(|| StoreError::not_found("team"))
}
