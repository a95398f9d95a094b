//! The live side of tasks: claim, heartbeat, complete, fail, release and lease expiry.

use super::super::error::StoreResult;
use super::super::rules::STATE_COLUMNS;
use super::super::types::Caller;
use super::agents::CLAIMER_NOT_REVOKED;
use super::db::Db;
use super::rows::{append_event, TASK_PROJECT};
use super::scope_claims::{self, SCOPED};
use super::task_state::{edges_from_row, load, save, save_all, state_from_row, EDGE_COLUMNS};
use super::tx::Tx;
use super::DB_NOW_MS;
use crate::hub::ProjectFilter;
use huddle_wire::limits::MAX_CLAIM_BATCH;
use huddle_wire::{Role, Task, TaskStatus};
use sqlx::Row;

/// Takes up to `max` of the oldest ready tasks whose prefix is one of `prefixes`, whose owner
/// is empty, the caller's name or the caller's role, and whose project `project` admits: picked, updated and read back with their
/// edges in one statement. No team lock: rows another claim holds are skipped. While the
/// search has a ready task with a file scope, the claim is made by [`scope_claims::claim`]. The
/// statement writes what `TaskState::claim` and `prepare_save` would (in progress, holder,
/// lease, one version more, updated now); the store contract tests hold both backends to it.
pub async fn claim(
    tx: &mut Tx,
    caller: &Caller,
    prefixes: &[String],
    project: Option<&ProjectFilter>,
    lease_ms: u64,
    max: usize,
) -> StoreResult<Vec<Task>> {
    let team_id = caller.team_id;
    // Written into the text only when filtering, so claims without a project never parse
    // metadata.
    let in_project = match project {
        None => String::new(),
        Some(p) if p.strict => format!("and {TASK_PROJECT} = $7"),
        Some(_) => format!("and ({TASK_PROJECT} = $7 or {TASK_PROJECT} is null)"),
    };
    tx.join_team(team_id).await?;
    tx.touch_agent(team_id, &caller.agent);
    let now = tx.now_ms();
    let max = max.clamp(1, MAX_CLAIM_BATCH as usize);
    let text = format!(
        // The picked rows are updated by key, not by `ctid`: a row changed and committed
        // after this statement's snapshot (a coordinator's edit of a pending task) is locked
        // in its newest version, which a `ctid` from the snapshot no longer names, so it would
        // stay locked and unclaimed. No join for the planner to misjudge. `limit` is written
        // into the text: with a parameter the planner costs a generic plan as if a tenth of
        // the team were taken and so plans every claim anew (a tenth of the claim's time). One
        // prepared statement per `max`, at most MAX_CLAIM_BATCH, which the connections'
        // statement cache has room for.
        // Scoped tasks are never taken here (`scope_claims.rs`): `scoped` probes the partial
        // index for one this search could take (an empty range in a team without scopes) and,
        // when there is one, nothing is taken and the claim is made under the team's scope
        // lock instead. The row comes back even when nothing was claimed (the left join).
        "with scoped as materialized (
             select exists(
                 select 1 from tasks
                 where team_id = $1 and status = 'pending' and unmet_blockers = 0
                   and {SCOPED} and prefix = any($2)
             ) as waiting
         ),
         claimed as (
             update tasks set status = 'in_progress', claimed_by = $3, lease_expires_at = $5,
                     heard_until = null, version = version + 1, updated_at = $6
             where team_id = $1 and id = any(array(
                 select id from tasks
                 where team_id = $1 and status = 'pending' and unmet_blockers = 0
                   and prefix = any($2)
                   and (owner is null or owner = $3 or owner = $4)
                   {in_project}
                   and not {SCOPED} and not (select waiting from scoped)
                   and {CLAIMER_NOT_REVOKED}
                 order by created_at, number
                 limit {max}
                 for update skip locked
             ))
             returning {STATE_COLUMNS}, number, {EDGE_COLUMNS}
         )
         select claimed.*, scoped.waiting as scope_waiting
         from scoped left join claimed on true"
    );
    // One statement per `max` and filter kind (none, strict, loose): workers claim with a
    // few of these; a rare one past the cache's room is prepared again, not refused.
    let query = sqlx::query(&text)
        .bind(team_id)
        .bind(prefixes)
        .bind(&caller.agent)
        .bind(caller.role.as_str())
        .bind(now + lease_ms as i64)
        .bind(now);
    let query = match project {
        Some(p) => query.bind(p.name.as_str()),
        None => query,
    };
    let mut rows = query.fetch_all(tx.conn()).await?;
    let scope_waiting = match rows.first() {
        Some(row) => row.try_get::<bool, _>("scope_waiting")?,
        None => false,
    };
    // Nothing claimed: the one row the left join kept has no task.
    rows.retain(|r| matches!(r.try_get::<Option<String>, _>("id"), Ok(Some(_))));
    if scope_waiting {
        rows = scope_claims::claim(tx, caller, prefixes, project, lease_ms, max).await?;
    }
    tx.count_moved(
        team_id,
        TaskStatus::Pending,
        TaskStatus::InProgress,
        rows.len(),
    );
    let mut claimed = Vec::with_capacity(rows.len());
    for row in &rows {
        let number: i64 = row.try_get("number")?;
        let edges = edges_from_row(row)?;
        claimed.push((state_from_row(team_id, row)?, number, edges));
    }
    // Oldest first, as picked: RETURNING keeps no order.
    claimed.sort_by_key(|(state, number, _)| (state.created_at, *number));
    let mut tasks = Vec::with_capacity(claimed.len());
    for (state, _, edges) in claimed {
        let task = state.into_task(edges);
        append_event(tx, team_id, "task.claimed", &task)?;
        tasks.push(task);
    }
    Ok(tasks)
}

/// Marks a heartbeat on its task the moment this replica receives it, before it waits in the
/// team's queue: `heard_until` is the lease it earned, on the database's clock. Another
/// replica's sweep, which cannot see this replica's queue, skips a lease heard until after its
/// cutoff ([`expire_team_leases`]). One statement outside the team's lock, touching this row
/// only, and skipping it while another transaction holds it (the marks' few connections must
/// never wait on one team's row: the holder is then a write of this very task, or a sweep
/// judging it, which a mark could not overtake anyway); only for the holder (or a
/// coordinator) of a task in progress, as [`heartbeat`] then checks again.
pub async fn hear_heartbeat(
    db: Db<'_>,
    caller: &Caller,
    id: &str,
    lease_ms: u64,
) -> StoreResult<()> {
    sqlx::query(&format!(
        "update tasks set heard_until = {DB_NOW_MS} + $4
         where team_id = $1 and id = $2 and status = 'in_progress'
           and (claimed_by = $3 or $5)
           and id in (select id from tasks where team_id = $1 and id = $2
                      for update skip locked)"
    ))
    .bind(caller.team_id)
    .bind(id)
    .bind(&caller.agent)
    .bind(lease_ms.min(i64::MAX as u64) as i64)
    .bind(caller.role == Role::Coordinator)
    .execute(db)
    .await?;
    Ok(())
}

/// Only the holder (or a coordinator) may extend the lease; no event is recorded for it. No
/// team lock: the task's row lock (`load`) is all it needs.
pub async fn heartbeat(tx: &mut Tx, caller: &Caller, id: &str, lease_ms: u64) -> StoreResult<Task> {
    tx.join_team(caller.team_id).await?;
    let mut task = load(tx, caller.team_id, id).await?;
    task.heartbeat(caller, tx.now_ms(), lease_ms)?;
    tx.touch_agent(caller.team_id, &caller.agent);
    // The answer is the state as saved, its edges read by the update (no second round trip).
    let row = sqlx::query(&format!(
        "update tasks set lease_expires_at = $3, version = $4, updated_at = $5
         where team_id = $1 and id = $2 returning {EDGE_COLUMNS}"
    ))
    .bind(caller.team_id)
    .bind(id)
    .bind(task.lease_expires_at)
    .bind(task.version)
    .bind(task.updated_at)
    .fetch_one(tx.conn())
    .await?;
    Ok(task.into_task(edges_from_row(&row)?))
}

/// Back to `pending` for another try while attempts remain, `failed` when `final_` or out of
/// attempts (`TaskState::fail`). No team lock, as for a completion: the task's row lock
/// (`load`) and the dependents' (`deps::adjust_dependents_of`).
pub async fn fail(
    tx: &mut Tx,
    caller: &Caller,
    id: &str,
    reason: String,
    final_: bool,
    result: Option<serde_json::Value>,
) -> StoreResult<Task> {
    tx.join_team(caller.team_id).await?;
    let mut task = load(tx, caller.team_id, id).await?;
    let event = task.fail(caller, reason, final_, result.map(|r| r.to_string()))?;
    tx.touch_agent(caller.team_id, &caller.agent);
    save(tx, task, event).await
}

/// Gives the task back to the queue without counting an attempt.
pub async fn release(tx: &mut Tx, caller: &Caller, id: &str) -> StoreResult<Task> {
    tx.lock_team(caller.team_id).await?;
    let mut task = load(tx, caller.team_id, id).await?;
    task.release(caller)?;
    save(tx, task, "task.released").await
}

/// The teams that have leases expired at `now_ms` (the database's clock, like every lease), for
/// [`expire_team_leases`].
pub async fn teams_with_expired_leases(
    db: super::db::Db<'_>,
    now_ms: i64,
) -> StoreResult<Vec<i64>> {
    Ok(sqlx::query_scalar(
        "select distinct team_id from tasks where status = 'in_progress' and lease_expires_at <= $1",
    )
    .bind(now_ms)
    .fetch_all(db)
    .await?)
}

/// Returns one team's expired leases to `pending` (or `failed` past `maxAttempts`). Replicas
/// sweeping at once queue on the team lock; the second finds nothing left to expire. A row a
/// completion or heartbeat holds is skipped (it is no longer expired, or the next sweep
/// takes it). Judged as
/// of `cutoff`, when the sweep started: waiting for the team's lock behind a long write must
/// not expire a lease heartbeated meanwhile. A heartbeat still waiting in another replica's
/// queue has marked its row ([`hear_heartbeat`], outside the team's lock): a lease heard until
/// after `cutoff` is left to its heartbeat, and a row whose mark is being written is locked, so
/// skipped.
pub async fn expire_team_leases(tx: &mut Tx, team_id: i64, cutoff: i64) -> StoreResult<usize> {
    tx.lock_team(team_id).await?;
    let rows = sqlx::query(&format!(
        "select {STATE_COLUMNS} from tasks
         where team_id = $1 and status = 'in_progress' and lease_expires_at <= $2
           and (heard_until is null or heard_until <= $2)
         order by lease_expires_at limit 10000
         for update skip locked"
    ))
    .bind(team_id)
    .bind(cutoff.min(tx.now_ms()))
    .fetch_all(tx.conn())
    .await?;
    let mut expired = rows
        .iter()
        .map(|r| state_from_row(team_id, r))
        .collect::<Result<Vec<_>, _>>()?;
    let count = expired.len();
    for task in &mut expired {
        task.expire();
    }
    save_all(tx, expired, "task.expired").await?;
    Ok(count)
}
