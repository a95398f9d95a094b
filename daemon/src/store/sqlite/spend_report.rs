//! The spend report on SQLite: the ledger summed by task, agent, model and day, from one read
//! snapshot (`store::spend`).

use super::super::error::StoreResult;
use super::spend::{totals_at, SUMS};
use huddle_wire::{SpendGroup, SpendReport, MAX_SPEND_GROUPS};
use rusqlite::{params, Connection};

fn groups(
    conn: &Connection,
    team_id: i64,
    task: Option<&str>,
    key: &str,
) -> StoreResult<Vec<SpendGroup>> {
    let mut stmt = conn.prepare_cached(&format!(
        "select {key}, {SUMS} from spend_calls
         where team_id = ?1 and (?2 is null or task_id = ?2) and {key} is not null
         group by {key}
         order by coalesce(sum(prompt_tokens), 0) + coalesce(sum(completion_tokens), 0) desc, {key}
         limit {MAX_SPEND_GROUPS}"
    ))?;
    let rows = stmt.query_map(params![team_id, task], |r| {
        Ok(SpendGroup::of(r.get(0)?, totals_at(r, 1)?))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub(super) fn report(
    conn: &Connection,
    team_id: i64,
    task: Option<&str>,
) -> StoreResult<SpendReport> {
    let total = conn
        .prepare_cached(&format!(
            "select {SUMS} from spend_calls where team_id = ?1 and (?2 is null or task_id = ?2)"
        ))?
        .query_row(params![team_id, task], |r| totals_at(r, 0))?;
    Ok(SpendReport {
        total,
        by_task: groups(conn, team_id, task, "task_id")?,
        by_agent: groups(conn, team_id, task, "agent")?,
        by_model: groups(conn, team_id, task, "model")?,
        by_day: groups(conn, team_id, task, "day")?,
    })
}
