//! The live side of tasks: claim, heartbeat, complete, fail, release and lease expiry.

use super::super::error::{StoreError, StoreResult};
use super::super::rules::{TaskState, STATE_COLUMNS};
use super::super::types::Caller;
use super::empty_claims::Exhausted;
use super::rows::{load_state, load_task, state_from_row, touch_agent, TASK_PROJECT};
use super::task_state::save;
use super::writer::WriteCtx;
use crate::hub::ProjectFilter;
use huddle_wire::Task;
use rusqlite::params;

/// Takes up to `max` of the oldest ready tasks whose prefix is one of `prefixes`, whose owner
/// is empty, the caller's name or the caller's role, and whose project `project` admits.
/// Atomic because the single writer runs it.
pub fn claim(
    ctx: &mut WriteCtx<'_>,
    caller: &Caller,
    prefixes: &[String],
    project: Option<&ProjectFilter>,
    lease_ms: u64,
    max: usize,
) -> StoreResult<Vec<Task>> {
    let prefixes_json =
        serde_json::to_string(prefixes).map_err(|e| StoreError::Internal(e.to_string()))?;
    // The ready rows come back whole: no second read per claimed task.
    let team_id = caller.team_id;
    let max = max.max(1);
    let mut ready: Vec<TaskState> = ctx
        .conn
        .prepare_cached(&format!(
            "select {STATE_COLUMNS} from tasks indexed by tasks_ready
             where team_id = ?1 and status = 'pending' and unmet_blockers = 0
               and prefix in (select value from json_each(?2))
               and (owner is null or owner = ?3 or owner = ?4)
               and (?6 is null or {TASK_PROJECT} = ?6 or (?7 and {TASK_PROJECT} is null))
             order by created_at, number
             limit ?5 + 1"
        ))?
        .query_map(
            params![
                team_id,
                prefixes_json,
                caller.agent,
                caller.role.as_str(),
                max as i64,
                project.map(|p| &p.name),
                project.is_some_and(|p| !p.strict),
            ],
            |r| state_from_row(team_id, r),
        )?
        .collect::<Result<_, _>>()?;
    touch_agent(ctx, team_id, &caller.agent)?;
    // One row past `max` tells whether this claim leaves anything it could have taken.
    if ready.len() <= max {
        let proof = Exhausted {
            prefixes: prefixes.to_vec(),
            agent: caller.agent.clone(),
            role: caller.role.as_str().to_string(),
            project: project.cloned(),
            touched_at: ctx.touched_at(team_id, &caller.agent).unwrap_or(0),
        };
        ctx.exhausted(team_id, proof);
    }
    ready.truncate(max);
    let mut claimed = Vec::with_capacity(ready.len());
    for mut task in ready {
        task.claim(&caller.agent, ctx.now_ms, lease_ms);
        claimed.push(save(ctx, task, "task.claimed")?);
    }
    Ok(claimed)
}

/// Only the holder (or a coordinator) may extend the lease; no event is recorded for it.
pub fn heartbeat(
    ctx: &mut WriteCtx<'_>,
    caller: &Caller,
    id: &str,
    lease_ms: u64,
) -> StoreResult<Task> {
    let mut task = load_state(ctx.conn, caller.team_id, id)?;
    task.heartbeat(caller, ctx.now_ms, lease_ms)?;
    touch_agent(ctx, caller.team_id, &caller.agent)?;
    ctx.conn
        .prepare_cached("update tasks set lease_expires_at = ?3, version = ?4, updated_at = ?5 where team_id = ?1 and id = ?2")?
        .execute(params![caller.team_id, id, task.lease_expires_at, task.version, task.updated_at])?;
    load_task(ctx.conn, caller.team_id, id)
}

pub fn complete(
    ctx: &mut WriteCtx<'_>,
    caller: &Caller,
    id: &str,
    result: Option<serde_json::Value>,
) -> StoreResult<Task> {
    let mut task = load_state(ctx.conn, caller.team_id, id)?;
    task.complete(caller, result.map(|r| r.to_string()))?;
    touch_agent(ctx, caller.team_id, &caller.agent)?;
    save(ctx, task, "task.completed")
}

/// Back to `pending` for another try while attempts remain, `failed` when `final_` or out of
/// attempts ([`TaskState::fail`]).
pub fn fail(
    ctx: &mut WriteCtx<'_>,
    caller: &Caller,
    id: &str,
    reason: String,
    final_: bool,
    result: Option<serde_json::Value>,
) -> StoreResult<Task> {
    let mut task = load_state(ctx.conn, caller.team_id, id)?;
    let event = task.fail(caller, reason, final_, result.map(|r| r.to_string()))?;
    touch_agent(ctx, caller.team_id, &caller.agent)?;
    save(ctx, task, event)
}

/// Gives the task back to the queue without counting an attempt.
pub fn release(ctx: &mut WriteCtx<'_>, caller: &Caller, id: &str) -> StoreResult<Task> {
    let mut task = load_state(ctx.conn, caller.team_id, id)?;
    task.release(caller)?;
    save(ctx, task, "task.released")
}

/// Leases live at `live_at_ms` are extended to at least `until_ms` (`writer::Outage`): their
/// holders could not heartbeat while nothing committed. Answers how many.
pub fn renew_after_outage(
    conn: &rusqlite::Connection,
    live_at_ms: i64,
    until_ms: i64,
) -> rusqlite::Result<usize> {
    conn.prepare_cached(
        "update tasks set lease_expires_at = ?2
         where status = 'in_progress' and lease_expires_at > ?1 and lease_expires_at < ?2",
    )?
    .execute(rusqlite::params![live_at_ms, until_ms])
}

/// Every lease that had expired by `cutoff` (when the sweep was sent, not when the writer got
/// to it), in every team, in one pass ([`TaskState::expire`]).
pub fn expire_leases(ctx: &mut WriteCtx<'_>, cutoff: i64) -> StoreResult<usize> {
    let expired: Vec<(i64, String)> = ctx
        .conn
        .prepare_cached(
            "select team_id, id from tasks indexed by tasks_leases
             where status = 'in_progress' and lease_expires_at <= ?1 limit 10000",
        )?
        .query_map([cutoff.min(ctx.now_ms)], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    for (team_id, id) in &expired {
        let mut task = load_state(ctx.conn, *team_id, id)?;
        task.expire();
        save(ctx, task, "task.expired")?;
    }
    Ok(expired.len())
}
