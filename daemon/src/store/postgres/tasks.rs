//! Editing and listing tasks (creating them is `task_create.rs`).

use super::super::rules;
use super::super::{Caller, Page, StoreResult, TaskFilter};
use super::deps;
use super::rows::{task_from_row, TASK_COLUMNS};
use super::task_state::{load_edges_of, TaskState};
use super::tx::Tx;
use crate::config::LimitSettings as Limits;
use crate::validate;
use huddle_wire::{Task, TaskPatch, TaskStatus};
use sqlx::PgPool;

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
    let mut task = TaskState::load(tx, team_id, id).await?;
    rules::check_version(if_match, task.version)?;
    rules::apply_patch_fields(
        rules::EditableTask {
            subject: &mut task.subject,
            description: &mut task.description,
            active_form: &mut task.active_form,
            owner: &mut task.owner,
            metadata: &mut task.metadata,
        },
        &mut patch,
        limits,
    )?;
    for blocker in &patch.remove_blocked_by {
        deps::remove_blocker(tx, team_id, id, blocker).await?;
    }
    deps::add_blockers(tx, team_id, id, &patch.add_blocked_by, "addBlockedBy").await?;
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
    if let Some(status) = patch.status {
        if status != task.status {
            let waiting = if status == TaskStatus::Completed && !patch.force {
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
            rules::check_hand_transition(id, status, patch.force, &waiting)?;
            if rules::status_clears_claim(status) {
                task.clear_claim();
            }
            if status != TaskStatus::Failed {
                task.failure_reason = None;
            }
            task.status = status;
        }
    }
    // Saving announces the task if it is left ready, whatever the patch changed.
    task.save(tx, "task.updated").await
}

/// Lists tasks in id order (`TEST-2` before `TEST-10`), one page at a time.
pub async fn list(pool: &PgPool, team_id: i64, filter: &TaskFilter) -> StoreResult<Page<Task>> {
    let after = match &filter.after {
        Some(a) => Some(validate::task_id("after", a)?),
        None => None,
    };
    let prefix = filter
        .prefix
        .as_deref()
        .map(|p| validate::prefix("prefix", p))
        .transpose()?;
    let (after_prefix, after_number) = after
        .map(|(p, n)| (Some(p), Some(n)))
        .unwrap_or((None, None));
    let limit = filter.limit;
    let mut conn = pool.acquire().await?;
    let rows = sqlx::query(&format!(
        "select {TASK_COLUMNS} from tasks
         where team_id = $1
           and ($2::text is null or status = $2)
           and ($3::text is null or owner = $3)
           and ($4::text is null or prefix = $4)
           and (not $5 or (status = 'pending' and unmet_blockers = 0))
           and ($6::text is null or (prefix, number) > ($6, $7))
           and ($9::text is null or claimed_by = $9)
         order by prefix, number
         limit $8"
    ))
    .bind(team_id)
    .bind(filter.status.map(|s| s.as_str()))
    .bind(&filter.owner)
    .bind(prefix)
    .bind(filter.ready)
    .bind(after_prefix)
    .bind(after_number)
    .bind(limit as i64 + 1)
    .bind(&filter.claimed_by)
    .fetch_all(&mut *conn)
    .await?;
    let mut items = rows
        .iter()
        .map(task_from_row)
        .collect::<Result<Vec<_>, _>>()?;
    let next = if items.len() > limit {
        items.truncate(limit);
        items.last().map(|t| t.id.clone())
    } else {
        None
    };
    // One query for the whole page's edges.
    let ids: Vec<String> = items.iter().map(|t| t.id.clone()).collect();
    let mut edges = load_edges_of(&mut conn, team_id, &ids).await?;
    for task in &mut items {
        if let Some((blocked_by, blocks)) = edges.remove(&task.id) {
            task.blocked_by = blocked_by;
            task.blocks = blocks;
        }
    }
    Ok(Page { items, next })
}
