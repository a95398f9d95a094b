//! Loading tasks' states and saving them back in a handful of statements; the transitions are
//! `rules::TaskState`'s.

use super::super::error::{StoreError, StoreResult};
use super::super::rules::{self, TaskEdges, TaskState, STATE_COLUMNS};
use super::deps;
use super::rows::status_of;
use super::tx::Tx;
use huddle_wire::Task;
use sqlx::postgres::PgRow;
use sqlx::Row;
use std::collections::{HashMap, HashSet};

/// A row's `blockedBy` and `blocks` read with it (from `tasks`, unaliased), for
/// [`edges_from_row`]: saves a round trip under the team's lock.
pub const EDGE_COLUMNS: &str = "array(select blocker_id from task_deps d
           where d.team_id = tasks.team_id and d.task_id = tasks.id) as blocked_by,
     array(select task_id from task_deps d
           where d.team_id = tasks.team_id and d.blocker_id = tasks.id) as blocks";

/// [`TaskEdges`] by task id.
pub type Edges = HashMap<String, TaskEdges>;

/// The [`EDGE_COLUMNS`] of a row, each list in id order.
pub fn edges_from_row(r: &PgRow) -> Result<TaskEdges, sqlx::Error> {
    let mut blocked_by: Vec<String> = r.try_get("blocked_by")?;
    let mut blocks: Vec<String> = r.try_get("blocks")?;
    rules::sort_ids(&mut blocked_by);
    rules::sort_ids(&mut blocks);
    Ok((blocked_by, blocks))
}

/// A row selected with [`STATE_COLUMNS`].
pub fn state_from_row(team_id: i64, r: &PgRow) -> Result<TaskState, sqlx::Error> {
    let status = status_of(r, "status")?;
    Ok(TaskState {
        team_id,
        id: r.try_get("id")?,
        subject: r.try_get("subject")?,
        description: r.try_get("description")?,
        active_form: r.try_get("active_form")?,
        status,
        owner: r.try_get("owner")?,
        claimed_by: r.try_get("claimed_by")?,
        lease_expires_at: r.try_get("lease_expires_at")?,
        attempts: r.try_get("attempts")?,
        max_attempts: r.try_get("max_attempts")?,
        metadata: r.try_get("metadata")?,
        result: r.try_get("result")?,
        failure_reason: r.try_get("failure_reason")?,
        version: r.try_get("version")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
        loaded_status: status,
        loaded_bytes: 0,
    }
    .as_loaded())
}

/// Loads a task and locks its row until the commit: claims and completions change rows
/// without the team's lock, so a read-modify-write holds the row it read.
pub async fn load(tx: &mut Tx, team_id: i64, id: &str) -> StoreResult<TaskState> {
    let row = sqlx::query(&format!(
        "select {STATE_COLUMNS} from tasks where team_id = $1 and id = $2 for update"
    ))
    .bind(team_id)
    .bind(id)
    .fetch_optional(tx.conn())
    .await?
    .ok_or_else(|| StoreError::not_found(format!("task {id}")))?;
    Ok(state_from_row(team_id, &row)?)
}

/// Writes one task back; see [`save_all`].
pub async fn save(tx: &mut Tx, state: TaskState, event: &str) -> StoreResult<Task> {
    let mut saved = save_all(tx, vec![state], event).await?;
    Ok(saved.remove(0))
}

/// Writes tasks of one team back with new versions in a handful of statements whatever their
/// number: one update, one adjustment of dependents' unmet counters for the tasks that entered
/// or left `completed`, one read of their edges, one insert of their `event`s. Returns the
/// wire tasks in the given order.
pub async fn save_all(tx: &mut Tx, states: Vec<TaskState>, event: &str) -> StoreResult<Vec<Task>> {
    save_all_with_edges(tx, states, event, None).await
}

/// [`save_all`] for a change that leaves every task's edges as `edges` (read with the rows).
pub async fn save_all_with_edges(
    tx: &mut Tx,
    states: Vec<TaskState>,
    event: &str,
    edges: Option<Edges>,
) -> StoreResult<Vec<Task>> {
    let Some(team_id) = states.first().map(|s| s.team_id) else {
        return Ok(Vec::new());
    };
    let now = tx.now_ms();
    if states.iter().any(|s| rules::scope::frees_scope(s, event)) {
        tx.scope_freed(team_id);
    }
    let mut states = states;
    for s in &mut states {
        s.prepare_save(now);
        tx.count_saved(s);
    }
    let col = |f: &dyn Fn(&TaskState) -> Option<String>| states.iter().map(f).collect::<Vec<_>>();
    let ids: Vec<String> = states.iter().map(|s| s.id.clone()).collect();
    sqlx::query(
        "update tasks as t set subject = u.subject, description = u.description,
                active_form = u.active_form, status = u.status, owner = u.owner,
                claimed_by = u.claimed_by, lease_expires_at = u.lease, attempts = u.attempts,
                heard_until = case when u.status = 'in_progress'
                                    and u.claimed_by is not distinct from t.claimed_by
                                   then t.heard_until end,
                metadata = u.metadata, result = u.result, failure_reason = u.failure_reason,
                version = u.version, updated_at = $2
         from unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                     $9::text[], $10::bigint[], $11::bigint[], $12::text[], $13::text[],
                     $14::text[], $15::bigint[])
              as u(id, subject, description, active_form, status, owner, claimed_by, lease,
                   attempts, metadata, result, failure_reason, version)
         where t.team_id = $1 and t.id = u.id",
    )
    .bind(team_id)
    .bind(now)
    .bind(&ids)
    .bind(col(&|s| Some(s.subject.clone())))
    .bind(col(&|s| Some(s.description.clone())))
    .bind(col(&|s| s.active_form.clone()))
    .bind(col(&|s| Some(s.status.as_str().to_string())))
    .bind(col(&|s| s.owner.clone()))
    .bind(col(&|s| s.claimed_by.clone()))
    .bind(
        states
            .iter()
            .map(|s| s.lease_expires_at)
            .collect::<Vec<_>>(),
    )
    .bind(states.iter().map(|s| s.attempts).collect::<Vec<_>>())
    .bind(col(&|s| Some(s.metadata.clone())))
    .bind(col(&|s| s.result.clone()))
    .bind(col(&|s| s.failure_reason.clone()))
    .bind(states.iter().map(|s| s.version).collect::<Vec<_>>())
    .execute(tx.conn())
    .await?;
    // Saving changes no edge, so they can be read before the counters are adjusted.
    let mut edges = match edges {
        Some(edges) => edges,
        None => load_edges_of(tx.conn(), team_id, &ids).await?,
    };
    // Dependents of tasks that entered (-1) or left (+1) `completed`; a task that blocks
    // nothing has none to adjust.
    let (moved, deltas): (Vec<String>, Vec<i64>) = states
        .iter()
        .filter(|s| {
            edges
                .get(&s.id)
                .is_some_and(|(_, blocks)| !blocks.is_empty())
        })
        .filter_map(|s| s.dependents_delta().map(|delta| (s.id.clone(), delta)))
        .unzip();
    let mut ready = if moved.is_empty() {
        Vec::new()
    } else {
        deps::adjust_dependents_of(tx, team_id, &moved, &deltas).await?
    };
    // Only a task saved as pending can be left ready; claims and completions skip the read.
    let pending: Vec<String> = states
        .iter()
        .filter(|s| s.may_be_ready())
        .map(|s| s.id.clone())
        .collect();
    if !pending.is_empty() {
        ready.extend(deps::ready_among(tx, team_id, &pending).await?);
    }
    let tasks: Vec<Task> = states
        .into_iter()
        .map(|s| {
            let task_edges = edges.remove(&s.id).unwrap_or_default();
            s.into_task(task_edges)
        })
        .collect();
    let data = tasks
        .iter()
        .map(|t| serde_json::to_string(t).map_err(|e| StoreError::Internal(e.to_string())))
        .collect::<StoreResult<Vec<_>>>()?;
    for json in data {
        tx.append_event(team_id, event, json);
    }
    for task in ready {
        tx.task_ready(team_id, task);
    }
    Ok(tasks)
}

/// `blockedBy` and `blocks` of several tasks in one query, each list in id order.
pub async fn load_edges_of(
    conn: super::db::Db<'_>,
    team_id: i64,
    ids: &[String],
) -> StoreResult<Edges> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "select task_id, blocker_id from task_deps
         where team_id = $1 and (task_id = any($2) or blocker_id = any($2))",
    )
    .bind(team_id)
    .bind(ids)
    .fetch_all(conn)
    .await?;
    let wanted: HashSet<&str> = ids.iter().map(String::as_str).collect();
    let mut edges = Edges::new();
    for (task, blocker) in rows {
        if wanted.contains(task.as_str()) {
            edges
                .entry(task.clone())
                .or_default()
                .0
                .push(blocker.clone());
        }
        if wanted.contains(blocker.as_str()) {
            edges.entry(blocker).or_default().1.push(task);
        }
    }
    for (blocked_by, blocks) in edges.values_mut() {
        rules::sort_ids(blocked_by);
        rules::sort_ids(blocks);
    }
    Ok(edges)
}
