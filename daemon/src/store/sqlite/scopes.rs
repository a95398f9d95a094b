//! The scopes of a team's tasks in progress, for claims and `why-not-ready`
//! ([`crate::store::rules::scope`]).

use super::super::error::StoreResult;
use super::super::rules::scope::{self, Held};
use rusqlite::{params, Connection};

/// The team's tasks in progress that have a scope. Read through the lease index (every task
/// in progress, of every team: as many as there are workers), and only when a claim meets a
/// scoped task, so claims in teams without scopes never run it.
pub fn held(conn: &Connection, team_id: i64) -> StoreResult<Vec<Held>> {
    let rows: Vec<(String, Option<String>, String)> = conn
        .prepare_cached(
            "select id, claimed_by, metadata from tasks indexed by tasks_leases
             where status = 'in_progress' and team_id = ?1 and instr(metadata, ?2) > 0",
        )?
        .query_map(params![team_id, scope::SCOPE_KEY_TEXT], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?
        .collect::<Result<_, _>>()?;
    Ok(Held::of_rows(rows))
}
