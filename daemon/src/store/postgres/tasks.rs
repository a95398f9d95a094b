//! Editing and listing tasks (creating them is `task_create.rs`).

use super::super::error::{StoreError, StoreResult};
use super::super::rules::{self, quota, STATE_COLUMNS};
use super::super::types::{Caller, Page, TaskFilter};
use super::db::Db;
use super::deps;
use super::task_state::{load, load_edges_of, save, state_from_row};
use super::tx::Tx;
use crate::config::LimitSettings as Limits;
use futures::TryStreamExt;
use huddle_wire::{Task, TaskPatch};

/// Applies a patch; `if_match` must equal the current version when given.
pub async fn update(
    tx: &mut Tx,
    caller: &Caller,
    id: &str,
    mut patch: TaskPatch,
    if_match: Option<i64>,
    limits: &Limits,
) -> StoreResult<Task> {
    let team_id = caller.team_id;
    tx.lock_team(team_id).await?;
    let mut task = load(tx, team_id, id).await?;
    rules::check_version(if_match, task.version)?;
    rules::apply_patch_fields(&mut task, &mut patch, limits)?;
    for blocker in &patch.remove_blocked_by {
        deps::remove_blocker(tx, team_id, id, blocker).await?;
    }
    let add = quota::edges_usage(patch.add_blocked_by.len());
    if !patch.add_blocked_by.is_empty() {
        tx.budget(team_id, limits).await?.check(&add)?;
    }
    deps::add_blockers(
        tx,
        team_id,
        id,
        &patch.add_blocked_by,
        "addBlockedBy",
        limits.max_dependency_walk,
    )
    .await?;
    if !patch.add_blocked_by.is_empty() {
        let count: i64 = sqlx::query_scalar(
            "select count(*) from task_deps where team_id = $1 and task_id = $2",
        )
        .bind(team_id)
        .bind(id)
        .fetch_one(tx.conn())
        .await?;
        rules::check_blocker_count(count as usize, limits)?;
    }
    tx.charge(team_id, &add);
    if let Some(status) = patch.status {
        let waiting = if task.needs_waiting(status, patch.force) {
            sqlx::query_scalar(
                "select d.blocker_id from task_deps d
                 join tasks b on b.team_id = d.team_id and b.id = d.blocker_id
                 where d.team_id = $1 and d.task_id = $2 and b.status != 'completed'
                 order by d.blocker_id",
            )
            .bind(team_id)
            .bind(id)
            .fetch_all(tx.conn())
            .await?
        } else {
            Vec::new()
        };
        task.set_status(status, patch.force, &waiting)?;
    }
    // Saving announces the task if it is left ready, whatever the patch changed.
    save(tx, task, "task.updated").await
}

/// Lists tasks in id order (`TEST-2` before `TEST-10`), one page at a time.
pub async fn list(mut db: Db<'_>, team_id: i64, filter: &TaskFilter) -> StoreResult<Page<Task>> {
    let query = rules::task_query(filter)?;
    let sql = format!(
        "select {STATE_COLUMNS} from tasks
         where team_id = $1
           and ($2::text is null or status = $2)
           and ($3::text is null or owner = $3)
           and ($4::text is null or prefix = $4)
           and (not $5 or (status = 'pending' and unmet_blockers = 0))
           and ($6::text is null or (prefix, number) > ($6, $7))
           and ($9::text is null or claimed_by = $9)
         order by prefix, number
         limit $8"
    );
    let mut rows = sqlx::query(&sql)
        .bind(team_id)
        .bind(filter.status.map(|s| s.as_str()))
        .bind(&filter.owner)
        .bind(query.prefix)
        .bind(filter.ready)
        .bind(query.after_prefix)
        .bind(query.after_number)
        .bind(query.fetch)
        .bind(&filter.claimed_by)
        .fetch(db.re());
    // Read one row at a time, up to the first that cannot be in the page (past the limit, or
    // a second row past the bytes), so the rows after it are never held.
    let (mut states, mut held) = (Vec::new(), 0);
    while let Some(row) = rows.try_next().await? {
        let state = state_from_row(team_id, &row)?;
        held += rules::task_bytes(&state);
        states.push(Ok::<_, StoreError>(state));
        let over_bytes = filter.max_bytes.is_some_and(|max| held > max) && states.len() > 1;
        if states.len() > filter.limit || over_bytes {
            break;
        }
    }
    drop(rows);
    let (items, next) = rules::take_task_page(states, filter.limit, filter.max_bytes)?;
    // One query for the whole page's edges.
    let ids: Vec<String> = items.iter().map(|t| t.id.clone()).collect();
    let mut edges = load_edges_of(db, team_id, &ids).await?;
    let items = items
        .into_iter()
        .map(|state| {
            let task_edges = edges.remove(&state.id).unwrap_or_default();
            state.into_task(task_edges)
        })
        .collect();
    Ok(Page { items, next })
}
