//! Retention on SQLite (`store::retention`): one writer job deletes, per team and under that
//! team's policy, at most `batch` finished tasks and test runs and `batch` of the oldest
//! messages (with their idempotency keys) and events. Sequences follow time within a team
//! (one writer, one clock), so "older than" and "past the newest N" both delete a prefix of
//! the team's sequence — capped at what the team's webhooks have handled.

use super::super::error::StoreResult;
use super::super::retention::{
    self, cap_for_webhooks, AgeOrCount, Pruned, RetentionPolicy, SeqLimits,
};
use super::writer::WriteCtx;
use rusqlite::params;

const FINISHED: &str = "('completed', 'failed', 'cancelled')";

pub fn prune(ctx: &mut WriteCtx<'_>, policy: &RetentionPolicy) -> StoreResult<Pruned> {
    let batch = policy.batch.max(1) as i64;
    let now = ctx.now_ms;
    let mut pruned = Pruned::default();
    let teams: Vec<(i64, i64, i64)> = ctx
        .conn
        .prepare_cached("select team_id, msg_seq, event_seq from team_seqs")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    for (team, msg_seq, event_seq) in teams {
        let p = policy.for_team(team);
        if let Some(limits) = p.finished_tasks_at(now) {
            pruned.tasks += finished_tasks(ctx, team, limits, batch)?;
        }
        let (msg_cursor, event_cursor) = webhook_cursors(ctx, team)?;
        let upto = cutoff(ctx, "messages", team, p.messages_at(now, msg_seq), batch)?;
        if let Some(upto) = cap_for_webhooks(upto, msg_cursor) {
            ctx.conn
                .prepare_cached("delete from idempotency_keys where team_id = ?1 and seq <= ?2")?
                .execute(params![team, upto])?;
            pruned.messages += ctx
                .conn
                .prepare_cached("delete from messages where team_id = ?1 and seq <= ?2")?
                .execute(params![team, upto])? as u64;
        }
        let upto = cutoff(ctx, "events", team, p.events_at(now, event_seq), batch)?;
        if let Some(upto) = cap_for_webhooks(upto, event_cursor) {
            pruned.events += ctx
                .conn
                .prepare_cached("delete from events where team_id = ?1 and seq <= ?2")?
                .execute(params![team, upto])? as u64;
        }
        if let Some(limits) = p.test_runs_at(now) {
            pruned.test_runs += test_runs(ctx, team, limits, batch)?;
        }
    }
    Ok(pruned)
}

/// The slowest message and event cursors of the team's webhooks (`None`: no webhook).
fn webhook_cursors(ctx: &WriteCtx<'_>, team: i64) -> StoreResult<(Option<i64>, Option<i64>)> {
    Ok(ctx
        .conn
        .prepare_cached(
            "select min(message_cursor), min(event_cursor) from webhooks where team_id = ?1",
        )?
        .query_row([team], |r| Ok((r.get(0)?, r.get(1)?)))?)
}

/// The last sequence of `table` to delete in `team` ([`retention::cutoff`]).
fn cutoff(
    ctx: &WriteCtx<'_>,
    table: &str,
    team: i64,
    limits: SeqLimits,
    batch: i64,
) -> StoreResult<Option<i64>> {
    let (by_age, oldest) = ctx
        .conn
        .prepare_cached(&retention::bounds_sql(table))?
        .query_row(params![team, limits.before_ms], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
    Ok(retention::cutoff(by_age, oldest, limits, batch))
}

/// The team's finished tasks last updated at or before the age limit, or past the newest
/// `finished_tasks_per_team`, that no unfinished task waits on, with their dependency edges.
fn finished_tasks(
    ctx: &WriteCtx<'_>,
    team: i64,
    limits: AgeOrCount,
    batch: i64,
) -> StoreResult<u64> {
    let victims: Vec<String> = ctx
        .conn
        .prepare_cached(&format!(
            "select t.id from tasks t
             where t.team_id = ?1 and t.status in {FINISHED}
               and (t.updated_at <= ?2 or t.id in (
                     select id from tasks where team_id = ?1 and status in {FINISHED}
                     order by updated_at desc, id desc limit -1 offset ?3))
               and not exists (
                 select 1 from task_deps d
                 join tasks o on o.team_id = d.team_id and o.id = d.task_id
                 where d.team_id = t.team_id and d.blocker_id = t.id
                   and o.status not in {FINISHED})
             limit ?4"
        ))?
        .query_map(params![team, limits.before_ms, limits.keep, batch], |r| {
            r.get(0)
        })?
        .collect::<Result<_, _>>()?;
    for id in &victims {
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

/// The team's test runs posted at or before the age limit or past the newest
/// `test_runs_per_team`, oldest first, with their outcomes.
fn test_runs(ctx: &WriteCtx<'_>, team: i64, limits: AgeOrCount, batch: i64) -> StoreResult<u64> {
    let runs: Vec<i64> = ctx
        .conn
        .prepare_cached(
            "select id from test_runs
             where team_id = ?1 and (created_at <= ?2 or id in (
                 select id from test_runs where team_id = ?1 order by id desc limit -1 offset ?3))
             order by id limit ?4",
        )?
        .query_map(params![team, limits.before_ms, limits.keep, batch], |r| {
            r.get(0)
        })?
        .collect::<Result<_, _>>()?;
    for run in &runs {
        ctx.conn
            .prepare_cached("delete from test_outcomes where run_id = ?1")?
            .execute([run])?;
        ctx.conn
            .prepare_cached("delete from test_runs where id = ?1")?
            .execute([run])?;
    }
    Ok(runs.len() as u64)
}
