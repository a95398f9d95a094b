//! The live side of tasks: claim, heartbeat, complete, fail, release and lease expiry.

use super::super::error::{StoreError, StoreResult};
use super::super::rules::scope::{self, Admission};
use super::super::rules::{TaskState, STATE_COLUMNS};
use super::super::types::Caller;
use super::agents;
use super::empty_claims::Exhausted;
use super::rows::{edges_of, load_state, state_from_row, touch_agent, TASK_PROJECT};
use super::scopes;
use super::task_state::save;
use super::writer::WriteCtx;
use crate::hub::ProjectFilter;
use huddle_wire::Task;
use rusqlite::params;
use std::borrow::Cow;

/// Takes up to `max` of the oldest ready tasks whose prefix is one of `prefixes`, whose owner
/// is empty, the caller's name or the caller's role, and whose project `project` admits.
/// A task whose scope overlaps one in progress is left for later ([`Admission`]). Atomic
/// because the single writer runs it: the scopes read are the scopes held.
pub fn claim(
    ctx: &mut WriteCtx<'_>,
    caller: &Caller,
    prefixes: &[String],
    project: Option<&ProjectFilter>,
    lease_ms: u64,
    max: usize,
) -> StoreResult<Vec<Task>> {
    let team_id = caller.team_id;
    // The token was checked when the request came in; a revocation committed since (earlier in
    // this batch, or while a parked claim waited) binds here: a revoked agent takes nothing.
    if agents::is_revoked(ctx.conn, team_id, &caller.agent)? {
        return Ok(Vec::new());
    }
    let max = max.max(1);
    // One row past `max` tells whether this claim leaves anything it could have taken.
    let want = max + 1;
    let search = Search {
        caller,
        prefixes: PrefixTest::of(prefixes)?,
        project,
    };
    let mut scoped = false;
    let mut ready = search.ready(ctx, want as i64, want, |t| {
        scoped |= t.metadata.contains(scope::SCOPE_KEY_TEXT);
        true
    })?;
    // A scoped task among them: walk the ready tasks again, past those whose scope overlaps a
    // task in progress (or one this claim takes). Only then is anything more read.
    let mut passed_over = false;
    if scoped {
        let mut walk = Admission::new(scopes::held(ctx.conn, team_id)?);
        ready = search.ready(ctx, -1, want, |t| walk.admit(&t.id, &t.metadata))?;
        passed_over = walk.passed_over;
    }
    touch_agent(ctx, team_id, &caller.agent)?;
    // A task passed over for its scope is still ready but was not taken: the searches are not
    // empty (it becomes claimable with no `TaskReady`, see `task_state::save`).
    if ready.len() <= max && !passed_over {
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

/// What a claim looks for: ready tasks of its prefixes, owners and project.
struct Search<'a> {
    caller: &'a Caller,
    prefixes: PrefixTest<'a>,
    project: Option<&'a ProjectFilter>,
}

/// The claim's prefixes as an SQL test on `prefix` and its parameters `?2` and `?8`. One or two
/// are compared in place. A longer list is read from JSON into a table SQLite builds on every
/// run of the search, which cost a one-prefix claim more than its compare (BENCHMARKS.md,
/// "A claim's prefixes compared in place").
struct PrefixTest<'a> {
    sql: &'static str,
    first: Cow<'a, str>,
    second: Option<&'a str>,
}

impl<'a> PrefixTest<'a> {
    fn of(prefixes: &'a [String]) -> StoreResult<PrefixTest<'a>> {
        const IN_PLACE: &str = "prefix in (?2, ?8)";
        Ok(match prefixes {
            // One prefix is compared twice (`?8` repeats it).
            [first] | [first, _] => PrefixTest {
                sql: IN_PLACE,
                first: Cow::Borrowed(first),
                second: prefixes.last().map(String::as_str),
            },
            _ => PrefixTest {
                sql: "prefix in (select value from json_each(?2)) and ?8 is null",
                first: Cow::Owned(
                    serde_json::to_string(prefixes)
                        .map_err(|e| StoreError::Internal(e.to_string()))?,
                ),
                second: None,
            },
        })
    }
}

impl Search<'_> {
    /// The oldest ready tasks, read whole (no second read per claimed task), up to `limit` rows
    /// (`-1`: no limit; the rows are stepped through only until `want` are kept), keeping
    /// those `keep` accepts.
    fn ready(
        &self,
        ctx: &mut WriteCtx<'_>,
        limit: i64,
        want: usize,
        mut keep: impl FnMut(&TaskState) -> bool,
    ) -> StoreResult<Vec<TaskState>> {
        let (caller, project) = (self.caller, self.project);
        let team_id = caller.team_id;
        let prefixes = &self.prefixes;
        let mut stmt = ctx.conn.prepare_cached(&format!(
            "select {STATE_COLUMNS} from tasks indexed by tasks_ready
             where team_id = ?1 and status = 'pending' and unmet_blockers = 0
               and {}
               and (owner is null or owner = ?3 or owner = ?4)
               and (?6 is null or {TASK_PROJECT} = ?6 or (?7 and {TASK_PROJECT} is null))
             order by created_at, number
             limit ?5",
            prefixes.sql
        ))?;
        let rows = stmt.query_map(
            params![
                team_id,
                prefixes.first,
                caller.agent,
                caller.role.as_str(),
                limit,
                project.map(|p| &p.name),
                project.is_some_and(|p| !p.strict),
                prefixes.second,
            ],
            |r| state_from_row(team_id, r),
        )?;
        let mut kept = Vec::with_capacity(want.min(64));
        for row in rows {
            let task = row?;
            if keep(&task) {
                kept.push(task);
                if kept.len() >= want {
                    break;
                }
            }
        }
        Ok(kept)
    }
}

/// Only the holder (or a coordinator) may extend the lease; no event is recorded for it. The
/// answer is the state as saved (no second read of the row).
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
    let edges = edges_of(ctx.conn, caller.team_id, id)?;
    Ok(task.into_task(edges))
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
