//! Creating, editing and listing tasks.

use super::super::rules::{self, IdRequest};
use super::super::{Caller, Page, StoreResult, TaskFilter};
use super::deps;
use super::rows::{append_event, load_task, task_from_row, TASK_COLUMNS};
use super::task_state::{load_edges_of, TaskState};
use super::tx::Tx;
use crate::config::LimitSettings as Limits;
use crate::validate;
use huddle_wire::{NewTask, Task, TaskPatch, TaskStatus};
use sqlx::PgPool;
use std::collections::HashSet;

/// Creates every task or none: ids first, then edges (a batch may refer to its own ids), then
/// events.
pub async fn create(
    tx: &mut Tx,
    caller: &Caller,
    tasks: Vec<NewTask>,
    default_max_attempts: i64,
    limits: &Limits,
) -> StoreResult<Vec<Task>> {
    rules::check_task_batch(tasks.len(), limits)?;
    let team_id = caller.team_id;
    tx.lock_team(team_id).await?;
    let mut ids = Vec::with_capacity(tasks.len());
    let mut seen = HashSet::new();
    for (i, t) in tasks.iter().enumerate() {
        let at = |field: &str| rules::batch_field(tasks.len(), i, field);
        rules::validate_new_task(t, &at, limits)?;
        let (prefix, number) = match rules::id_request(t, &at)? {
            IdRequest::Explicit(p, n) => (p, n),
            IdRequest::Next(p) => {
                let next: Option<i64> = sqlx::query_scalar(
                    "select next_number from task_counters where team_id = $1 and prefix = $2",
                )
                .bind(team_id)
                .bind(&p)
                .fetch_optional(tx.conn())
                .await?;
                (p, next.unwrap_or(1))
            }
        };
        let id =
            t.id.clone()
                .unwrap_or_else(|| format!("{prefix}-{number:03}"));
        let taken: Option<i32> = sqlx::query_scalar(
            "select 1 from tasks where team_id = $1 and prefix = $2 and number = $3",
        )
        .bind(team_id)
        .bind(&prefix)
        .bind(number)
        .fetch_optional(tx.conn())
        .await?;
        if !seen.insert((prefix.clone(), number)) || taken.is_some() {
            return Err(rules::duplicate_task(&id));
        }
        let metadata = t.metadata.clone().unwrap_or_else(|| serde_json::json!({}));
        let now = tx.now_ms;
        sqlx::query(
            "insert into tasks (team_id, id, prefix, number, subject, description, active_form, status, owner,
                                max_attempts, metadata, created_at, updated_at)
             values ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9, $10, $11, $11)",
        )
        .bind(team_id)
        .bind(&id)
        .bind(&prefix)
        .bind(number)
        .bind(&t.subject)
        .bind(t.description.clone().unwrap_or_default())
        .bind(&t.active_form)
        .bind(t.owner.clone().filter(|o| !o.is_empty()))
        .bind(t.max_attempts.unwrap_or(default_max_attempts))
        .bind(metadata.to_string())
        .bind(now)
        .execute(tx.conn())
        .await?;
        sqlx::query(
            "insert into task_counters (team_id, prefix, next_number) values ($1, $2, $3 + 1)
             on conflict (team_id, prefix) do update
             set next_number = greatest(task_counters.next_number, excluded.next_number)",
        )
        .bind(team_id)
        .bind(&prefix)
        .bind(number)
        .execute(tx.conn())
        .await?;
        ids.push(id);
    }
    for (i, (t, id)) in tasks.iter().zip(&ids).enumerate() {
        let field = rules::batch_field(tasks.len(), i, "blockedBy");
        for blocker in &t.blocked_by {
            deps::add_blocker(tx, team_id, id, blocker, &field).await?;
        }
    }
    let mut created = Vec::with_capacity(ids.len());
    for id in &ids {
        let task = load_task(tx.conn(), team_id, id).await?;
        append_event(tx, team_id, "task.created", &task).await?;
        created.push(task);
    }
    for ready in deps::ready_among(tx, team_id, &ids).await? {
        tx.task_ready(team_id, ready);
    }
    Ok(created)
}

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
    for blocker in &patch.add_blocked_by {
        deps::add_blocker(tx, team_id, id, blocker, "addBlockedBy").await?;
    }
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
