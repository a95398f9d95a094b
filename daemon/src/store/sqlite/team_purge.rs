//! Removing a team's rows without holding every other team's writes: one writer serves every
//! team, so a deletion (or a failed import) of 100,000 messages in one job held them all for
//! about a second. The team is first made unreachable in one short job ([`retire`]: its agents
//! and webhooks go, its name becomes [`RETIRED_PREFIX`]`<id>`, which no API name matches), then
//! its rows go [`PURGE_CHUNK`] per writer job, other teams' jobs taking their turns between, and
//! the `teams` row last, so the id is not handed out again before its rows are gone.
//!
//! A daemon stopped midway finishes the purge when it next opens the file ([`purge_leftovers`]):
//! teams whose names begin with `~` (retired, or an import that never finished) are purged
//! before the writer starts.

use super::super::error::{StoreError, StoreResult};
use super::super::team_admin::TEAM_TABLES;
use super::writer::{WriteCtx, Writer};
use crate::hub::Publish;
use rusqlite::{params, Connection, OptionalExtension};

/// What a team's name becomes while its rows are purged.
pub const RETIRED_PREFIX: &str = "~deleted-";

/// Rows deleted per writer job: about 10 ms of the writer (a message's row also leaves the
/// full-text index).
pub const PURGE_CHUNK: i64 = 500;

/// The short first step of a deletion: the team is gone for every caller (name, tokens,
/// webhooks), its rows still there. `NotFound` when there is no such team.
pub fn retire(ctx: &mut WriteCtx<'_>, team_id: i64) -> StoreResult<()> {
    let found: Option<i64> = ctx
        .conn
        .prepare_cached("select id from teams where id = ?1")?
        .query_row([team_id], |r| r.get(0))
        .optional()?;
    if found.is_none() {
        return Err(StoreError::not_found(format!("team {team_id}")));
    }
    for table in ["webhook_deliveries", "webhooks", "agents"] {
        ctx.conn
            .prepare_cached(&format!("delete from {table} where team_id = ?1"))?
            .execute([team_id])?;
    }
    ctx.conn
        .prepare_cached("update teams set name = ?2 || id where id = ?1")?
        .execute(params![team_id, RETIRED_PREFIX])?;
    ctx.forget_team(team_id);
    // Forgets the team's empty-claim marks and wakes its waiting claimers (which then end:
    // their tokens are gone).
    ctx.publish(team_id, Publish::TasksChanged);
    Ok(())
}

/// Deletes every row of a retired (or never finished) team, a chunk per writer job.
pub async fn purge(writer: &Writer, team_id: i64) -> StoreResult<()> {
    for table in TEAM_TABLES.iter().filter(|t| **t != "teams") {
        while writer
            .write_team(team_id, move |ctx| delete_chunk(ctx.conn, team_id, table))
            .await?
            == PURGE_CHUNK as usize
        {}
    }
    writer
        .write_team(team_id, move |ctx| {
            ctx.conn
                .prepare_cached("delete from teams where id = ?1")?
                .execute([team_id])?;
            ctx.forget_team(team_id);
            Ok(())
        })
        .await?;
    writer.forget_team(team_id);
    Ok(())
}

/// Purges what a stopped daemon left: every team whose name begins with `~`, one chunk per
/// transaction. Runs before the writer starts.
pub fn purge_leftovers(conn: &mut Connection) -> StoreResult<()> {
    let teams: Vec<(i64, String)> = conn
        .prepare("select id, name from teams where name like '~%'")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    for (team_id, name) in teams {
        tracing::info!(team = %name, "removing the rows of a team a stopped daemon left half deleted or half imported");
        for table in TEAM_TABLES {
            loop {
                let tx = conn.transaction()?;
                let deleted = if table == "teams" {
                    tx.execute("delete from teams where id = ?1", [team_id])?
                } else {
                    delete_chunk(&tx, team_id, table)?
                };
                tx.commit()?;
                if deleted < PURGE_CHUNK as usize {
                    break;
                }
            }
        }
    }
    Ok(())
}

/// Deletes at most [`PURGE_CHUNK`] of the team's rows of `table`; how many it deleted.
fn delete_chunk(conn: &Connection, team_id: i64, table: &str) -> StoreResult<usize> {
    let sql = match table {
        "test_outcomes" => "delete from test_outcomes where (run_id, nodeid) in \
             (select o.run_id, o.nodeid from test_outcomes o join test_runs r on r.id = o.run_id \
              where r.team_id = ?1 limit ?2)"
            .to_string(),
        other => {
            let key = chunk_key(other);
            format!("delete from {other} where ({key}) in (select {key} from {other} where team_id = ?1 limit ?2)")
        }
    };
    Ok(conn
        .prepare_cached(&sql)?
        .execute(params![team_id, PURGE_CHUNK])?)
}

/// The primary key a chunk of `table` is picked by (the `without rowid` tables have no rowid).
fn chunk_key(table: &str) -> &'static str {
    match table {
        "tasks" => "team_id, id",
        "task_deps" => "team_id, task_id, blocker_id",
        "task_counters" => "team_id, prefix",
        "messages" | "events" => "team_id, seq",
        "idempotency_keys" => "team_id, agent, key",
        "memory_history" => "team_id, version",
        _ => "rowid",
    }
}
