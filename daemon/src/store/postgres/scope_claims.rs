//! Claims in a team that has ready tasks with a file scope ([`crate::store::rules::scope`]).
//!
//! Claims take no team lock: their rows are picked `FOR UPDATE SKIP LOCKED`, so two claims never
//! take the same task. That cannot keep two *different* tasks with overlapping scopes from being
//! taken at once, each by a claim that did not see the other's. So the one-statement claim
//! (`claims.rs`) never takes a scoped task, and takes nothing while its search has one ready
//! (the index probe it runs, `tasks_scoped_ready`, finds an empty range in a team without
//! scopes); such claims come here, and these are serialised per team by a transaction-level
//! advisory lock, on every replica. A row lock could not do it: what must be excluded is a
//! *new* row entering `in_progress`, which no existing row lock covers; a lock per glob cannot
//! express overlap of wildcards. The lock is held to the commit, so the next holder's reads
//! (statements of their own, under READ COMMITTED) see every scope the previous one took;
//! tasks leaving `in_progress` need no lock (seen still held, they only hold back a claim
//! longer, and their commit wakes the claimers: `Tx::scope_freed`).
//!
//! While holding the lock a claim waits for no row: candidates are read without locks and the
//! chosen ones updated `SKIP LOCKED`, so the lock never closes a deadlock cycle by itself (a
//! batch that holds a row another write of its batch waits for is retried alone by the
//! batcher, as for any deadlock).

use super::super::error::StoreResult;
use super::super::rules::scope::{Admission, Held};
use super::super::rules::STATE_COLUMNS;
use super::super::types::Caller;
use super::agents::CLAIMER_NOT_REVOKED;
use super::db::Db;
use super::rows::TASK_PROJECT;
use super::task_state::EDGE_COLUMNS;
use super::tx::Tx;
use crate::hub::ProjectFilter;
use sqlx::postgres::PgRow;
use sqlx::Row;

/// A task's metadata may hold a scope (the cheap text test of `scope::SCOPE_KEY_TEXT`),
/// written exactly as the partial index `tasks_scoped_ready` is (migration 0016).
pub const SCOPED: &str = r#"metadata like '%"scope"%'"#;

/// The advisory lock class of scoped claims (the other key is the team's id); the team lock
/// (`tx.rs`) is another class, so scoped claims do not queue behind quota or message writes.
const SCOPE_LOCK_CLASS: i32 = 0x6875_6473;

/// Ready tasks read per round trip while walking past the ones whose scope overlaps.
const PAGE: i64 = 200;

/// The team's tasks in progress that have a scope (through the lease index: as many rows as
/// tasks in progress). Also what `why-not-ready` reads.
pub async fn held(db: Db<'_>, team_id: i64) -> StoreResult<Vec<Held>> {
    let rows: Vec<(String, Option<String>, String)> = sqlx::query_as(&format!(
        "select id, claimed_by, metadata from tasks
         where status = 'in_progress' and team_id = $1 and {SCOPED}"
    ))
    .bind(team_id)
    .fetch_all(db)
    .await?;
    Ok(Held::of_rows(rows))
}

/// Takes up to `max` of the oldest ready tasks the claim may take, passing over those whose
/// scope overlaps a task in progress or one taken before them here. Returns the rows as the
/// one-statement claim does (`STATE_COLUMNS`, `number`, `EDGE_COLUMNS`).
pub async fn claim(
    tx: &mut Tx,
    caller: &Caller,
    prefixes: &[String],
    project: Option<&ProjectFilter>,
    lease_ms: u64,
    max: usize,
) -> StoreResult<Vec<PgRow>> {
    let team_id = caller.team_id;
    sqlx::query("select pg_advisory_xact_lock($1, ($2 % 2147483647)::int)")
        .bind(SCOPE_LOCK_CLASS)
        .bind(team_id)
        .execute(tx.conn())
        .await?;
    let mut walk = Admission::new(held(tx.conn(), team_id).await?);
    let (ids, versions) = choose(tx, caller, prefixes, project, max, &mut walk).await?;
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let now = tx.now_ms();
    // A row changed since it was read (another version) or locked by another write is left:
    // its scope may no longer be the one judged.
    let rows = sqlx::query(&format!(
        "update tasks set status = 'in_progress', claimed_by = $3, lease_expires_at = $4,
                heard_until = null, version = version + 1, updated_at = $5
         where team_id = $1 and id = any(array(
             select t.id from tasks t
             join unnest($2::text[], $6::bigint[]) as c(id, version) on t.id = c.id
             where t.team_id = $1 and t.version = c.version
               and t.status = 'pending' and t.unmet_blockers = 0
               and {CLAIMER_NOT_REVOKED}
             for update of t skip locked
         ))
         returning {STATE_COLUMNS}, number, {EDGE_COLUMNS}"
    ))
    .bind(team_id)
    .bind(&ids)
    .bind(&caller.agent)
    .bind(now + lease_ms as i64)
    .bind(now)
    .bind(&versions)
    .fetch_all(tx.conn())
    .await?;
    Ok(rows)
}

/// Walks the claim's ready tasks oldest first, a page at a time, until `max` are admitted:
/// their ids and the versions judged.
async fn choose(
    tx: &mut Tx,
    caller: &Caller,
    prefixes: &[String],
    project: Option<&ProjectFilter>,
    max: usize,
    walk: &mut Admission,
) -> StoreResult<(Vec<String>, Vec<i64>)> {
    let in_project = match project {
        None => String::new(),
        Some(p) if p.strict => format!("and {TASK_PROJECT} = $8"),
        Some(_) => format!("and ({TASK_PROJECT} = $8 or {TASK_PROJECT} is null)"),
    };
    let text = format!(
        // `id` breaks ties: `number` is unique only within a prefix, and the pages must not
        // skip a row that shares its `(created_at, number)` with the last one read.
        "select id, metadata, version, created_at, number from tasks
         where team_id = $1 and status = 'pending' and unmet_blockers = 0
           and prefix = any($2)
           and (owner is null or owner = $3 or owner = $4)
           and (created_at, number, id) > ($5, $6, $7)
           {in_project}
         order by created_at, number, id
         limit {PAGE}"
    );
    let (mut ids, mut versions) = (Vec::new(), Vec::new());
    let mut after = (i64::MIN, i64::MIN, String::new());
    loop {
        let query = sqlx::query(&text)
            .bind(caller.team_id)
            .bind(prefixes)
            .bind(&caller.agent)
            .bind(caller.role.as_str())
            .bind(after.0)
            .bind(after.1)
            .bind(after.2.clone());
        let query = match project {
            Some(p) => query.bind(p.name.as_str()),
            None => query,
        };
        let rows = query.fetch_all(tx.conn()).await?;
        for row in &rows {
            let id: String = row.try_get("id")?;
            let metadata: String = row.try_get("metadata")?;
            after = (
                row.try_get("created_at")?,
                row.try_get("number")?,
                id.clone(),
            );
            if walk.admit(&id, &metadata) {
                ids.push(id);
                versions.push(row.try_get::<i64, _>("version")?);
                if ids.len() >= max {
                    return Ok((ids, versions));
                }
            }
        }
        if (rows.len() as i64) < PAGE {
            return Ok((ids, versions));
        }
    }
}
