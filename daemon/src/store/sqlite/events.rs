//! Reading the team's event log (appending is `rows::append_event`, inside each change).

use super::super::StoreResult;
use super::rows::event_from_row;
use huddle_wire::Event;
use rusqlite::{params, Connection};

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
