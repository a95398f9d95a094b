//! Retention on SQLite (`store::retention`): one writer job deletes at most `batch` finished
//! tasks, test runs, and per team `batch` of the oldest messages (with their idempotency keys)
//! and events. Sequences follow time within a team (one writer, one clock), so "older than"
//! and "past the newest N" both delete a prefix of the team's sequence.

use super::super::retention::{Pruned, RetentionPolicy};
use super::super::StoreResult;
use super::writer::WriteCtx;
use rusqlite::{params, OptionalExtension};

const FINISHED: &str = "('completed', 'failed', 'cancelled')";

pub fn prune(ctx: &mut WriteCtx<'_>, policy: &RetentionPolicy) -> StoreResult<Pruned> {
    let batch = policy.batch.max(1) as i64;
    let now = ctx.now_ms;
    let mut pruned = Pruned::default();
    if let Some(age) = policy.finished_tasks_max_age_ms {
        pruned.tasks = finished_tasks(ctx, now - age, batch)?;
    }
    let teams: Vec<(i64, i64, i64)> = ctx
        .conn
        .prepare_cached("select id, msg_seq, event_seq from teams")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    for (team, msg_seq, event_seq) in teams {
        let upto = cutoff(
            ctx,
            "messages",
            team,
            policy.messages_max_age_ms.map(|a| now - a),
            policy.messages_per_team.map(|keep| msg_seq - keep as i64),
            batch,
        )?;
        if let Some(upto) = upto {
            ctx.conn
                .prepare_cached("delete from idempotency_keys where team_id = ?1 and seq <= ?2")?
                .execute(params![team, upto])?;
            pruned.messages += ctx
                .conn
                .prepare_cached("delete from messages where team_id = ?1 and seq <= ?2")?
                .execute(params![team, upto])? as u64;
        }
        let upto = cutoff(
            ctx,
            "events",
            team,
            policy.events_max_age_ms.map(|a| now - a),
            policy.events_per_team.map(|keep| event_seq - keep as i64),
            batch,
        )?;
        if let Some(upto) = upto {
            pruned.events += ctx
                .conn
                .prepare_cached("delete from events where team_id = ?1 and seq <= ?2")?
                .execute(params![team, upto])? as u64;
        }
    }
    if let Some(age) = policy.test_runs_max_age_ms {
        let runs: Vec<i64> = ctx
            .conn
            .prepare_cached("select id from test_runs where created_at <= ?1 order by id limit ?2")?
            .query_map(params![now - age, batch], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        for run in &runs {
            ctx.conn
                .prepare_cached("delete from test_outcomes where run_id = ?1")?
                .execute([run])?;
            ctx.conn
                .prepare_cached("delete from test_runs where id = ?1")?
                .execute([run])?;
        }
        pruned.test_runs = runs.len() as u64;
    }
    Ok(pruned)
}

/// The last sequence of `table` to delete in `team`: everything created at or before
/// `before_ms` and everything at or below `past_count`, at most `batch` rows from the oldest.
fn cutoff(
    ctx: &WriteCtx<'_>,
    table: &str,
    team: i64,
    before_ms: Option<i64>,
    past_count: Option<i64>,
    batch: i64,
) -> StoreResult<Option<i64>> {
    let by_age: Option<i64> = match before_ms {
        None => None,
        Some(before) => ctx
            .conn
            .prepare_cached(&format!(
                "select max(seq) from {table} where team_id = ?1 and created_at <= ?2"
            ))?
            .query_row(params![team, before], |r| r.get(0))
            .optional()?
            .flatten(),
    };
    let Some(upto) = by_age.into_iter().chain(past_count).max() else {
        return Ok(None);
    };
    let oldest: Option<i64> = ctx
        .conn
        .prepare_cached(&format!("select min(seq) from {table} where team_id = ?1"))?
        .query_row([team], |r| r.get(0))?;
    Ok(match oldest {
        Some(oldest) if oldest <= upto => Some(upto.min(oldest + batch - 1)),
        _ => None,
    })
}

/// Finished tasks last updated at or before `before_ms` that no unfinished task waits on,
/// with their dependency edges.
fn finished_tasks(ctx: &WriteCtx<'_>, before_ms: i64, batch: i64) -> StoreResult<u64> {
    let victims: Vec<(i64, String)> = ctx
        .conn
        .prepare_cached(&format!(
            "select t.team_id, t.id from tasks t
             where t.status in {FINISHED} and t.updated_at <= ?1
               and not exists (
                 select 1 from task_deps d
                 join tasks o on o.team_id = d.team_id and o.id = d.task_id
                 where d.team_id = t.team_id and d.blocker_id = t.id
                   and o.status not in {FINISHED})
             limit ?2"
        ))?
        .query_map(params![before_ms, batch], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    for (team, id) in &victims {
        ctx.conn
            .prepare_cached(
                "delete from task_deps where team_id = ?1 and (task_id = ?2 or blocker_id = ?2)",
            )?
            .execute(params![team, id])?;
        ctx.conn
            .prepare_cached("delete from tasks where team_id = ?1 and id = ?2")?
            .execute(params![team, id])?;
    }
    Ok(victims.len() as u64)
}
