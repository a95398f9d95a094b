//! Completing tasks: every listed task or none, in a handful of statements whatever their
//! number, without the team's lock: the rows are locked by the statements that read or change
//! them. The common case (a worker completing distinct tasks it holds) is one statement;
//! anything else reads and locks the rows, completes each by the shared rule
//! (`TaskState::complete`) and saves them together.

use super::super::error::{StoreError, StoreResult};
use super::super::rules::{self, TaskEdges, TaskState, STATE_COLUMNS};
use super::super::types::Caller;
use super::deps;
use super::rows::append_event;
use super::task_state::{
    edges_from_row, load, save_all_with_edges, state_from_row, Edges, EDGE_COLUMNS,
};
use super::tx::Tx;
use huddle_wire::{Role, Task, TaskStatus};
use sqlx::Row;
use std::collections::{HashMap, HashSet};

/// Completes one task: [`complete_many`] with one item (same checks, same errors).
pub async fn complete(
    tx: &mut Tx,
    caller: &Caller,
    id: &str,
    result: Option<serde_json::Value>,
) -> StoreResult<Task> {
    let mut done = complete_many(tx, caller, vec![(id.to_string(), result)]).await?;
    Ok(done.remove(0))
}

/// Completes every listed task or none; the first refusal in the given order is the error.
pub async fn complete_many(
    tx: &mut Tx,
    caller: &Caller,
    items: Vec<(String, Option<serde_json::Value>)>,
) -> StoreResult<Vec<Task>> {
    let team_id = caller.team_id;
    tx.join_team(team_id).await?;
    let distinct = items.iter().map(|(id, _)| id).collect::<HashSet<_>>().len() == items.len();
    if caller.role != Role::Coordinator && distinct {
        return complete_held(tx, caller, items).await;
    }
    let ids: Vec<String> = items.iter().map(|(id, _)| id.clone()).collect();
    let rows = sqlx::query(&format!(
        // Locked in id order, as every multi-row lock is, so two of these never deadlock.
        "select {STATE_COLUMNS}, {EDGE_COLUMNS} from tasks where team_id = $1 and id = any($2)
         order by id for update"
    ))
    .bind(team_id)
    .bind(&ids)
    .fetch_all(tx.conn())
    .await?;
    let mut found: HashMap<String, TaskState> = HashMap::with_capacity(rows.len());
    let mut edges = Edges::with_capacity(rows.len());
    for row in &rows {
        let state = state_from_row(team_id, row)?;
        edges.insert(state.id.clone(), edges_from_row(row)?);
        found.insert(state.id.clone(), state);
    }
    let mut done = Vec::with_capacity(items.len());
    for (id, result) in items {
        let Some(mut task) = found.remove(&id) else {
            // Unknown, or listed twice (then it is already completed by this request).
            if done.iter().any(|t: &TaskState| t.id == id) {
                rules::ensure_holder(&id, TaskStatus::Completed, None, caller, true)?;
            }
            return Err(StoreError::not_found(format!("task {id}")));
        };
        task.complete(caller, result.map(|r| r.to_string()))?;
        done.push(task);
    }
    tx.touch_agent(team_id, &caller.agent);
    save_all_with_edges(tx, done, "task.completed", Some(edges)).await
}

/// A worker completing distinct tasks. For a caller that is not a coordinator the holder
/// check of `TaskState::complete` is "in progress and claimed by the caller" (and, for a task
/// whose metadata requires evidence, a result the HTTP layer marked checked), so the statement
/// applies that rule and its save (completed, the result, no lease, one version more, updated
/// now) to the rows that pass: one round trip instead of a read and a write. The rule is
/// checked on the row as locked, after waiting for any other writer of it (another
/// completion, a coordinator's change), so a task is completed once. A row that does not pass
/// (unknown, closed, someone else's) is judged by `TaskState::complete` itself, the first such
/// in the given order, and the caller's transaction is rolled back as for any refusal.
async fn complete_held(
    tx: &mut Tx,
    caller: &Caller,
    items: Vec<(String, Option<serde_json::Value>)>,
) -> StoreResult<Vec<Task>> {
    let team_id = caller.team_id;
    let now = tx.now_ms();
    let (ids, results): (Vec<String>, Vec<Option<String>>) = items
        .into_iter()
        .map(|(id, result)| (id, result.map(|r| r.to_string())))
        .unzip();
    // One item (every unbatched completion) is read as one row of scalars: from an array
    // PostgreSQL costs the generic plan for ten items and the custom one for one, so it planned
    // every completion anew (two fifths of its time).
    let items = if ids.len() == 1 {
        "(values (($2::text[])[1], ($3::text[])[1])) as u(done_id, done_result)"
    } else {
        "unnest($2::text[], $3::text[]) as u(done_id, done_result)"
    };
    let rows = sqlx::query(&format!(
        // The rows are found by primary key and locked (in id order, as every multi-row lock
        // is) before they are judged: `held` is read from the row as locked, after waiting for
        // any other writer of it, so a task is completed once. The update finds them by
        // primary key again, which reaches the locked (latest) version even when it is newer
        // than the statement's snapshot. The rule is not written in a WHERE clause on
        // `tasks`: `status = 'in_progress'` there lets the planner pick the lease index, whose
        // statistics (taken when the tasks were created) say no task is in progress, and scan
        // every task in progress per row.
        "with target as materialized (
             select tasks.id as target_id, u.done_result,
                    coalesce(octet_length(tasks.result), 0) as old_result_bytes,
                    tasks.status = 'in_progress' and tasks.claimed_by = $5
                    and (strpos(tasks.metadata, 'requireEvidence') = 0
                         or (tasks.metadata::jsonb -> 'requireEvidence') is distinct from 'true'::jsonb
                         or (u.done_result::jsonb #>> '{{evidence,checked,by}}') is not distinct from 'huddled')
                    as held
             from {items}
             join tasks on tasks.team_id = $1 and tasks.id = u.done_id
             order by tasks.id
             for update of tasks
         )
         update tasks set status = 'completed', lease_expires_at = null, heard_until = null,
                version = version + 1, updated_at = $4, result = target.done_result
         from target
         where tasks.team_id = $1 and tasks.id = target.target_id and target.held
         returning {STATE_COLUMNS}, {EDGE_COLUMNS}, target.old_result_bytes"
    ))
    .bind(team_id)
    .bind(&ids)
    .bind(&results)
    .bind(now)
    .bind(&caller.agent)
    .fetch_all(tx.conn())
    .await?;
    let mut done: HashMap<String, (TaskState, TaskEdges)> = HashMap::new();
    let mut bytes = 0;
    for row in &rows {
        let state = state_from_row(team_id, row)?;
        bytes += state.result.as_ref().map_or(0, |r| r.len() as i64)
            - row.try_get::<i32, _>("old_result_bytes")? as i64;
        done.insert(state.id.clone(), (state, edges_from_row(row)?));
    }
    if let Some(missing) = ids.iter().find(|id| !done.contains_key(*id)) {
        return Err(refusal(tx, caller, missing).await);
    }
    tx.count_completed(team_id, done.len(), bytes);
    tx.touch_agent(team_id, &caller.agent);
    if done
        .values()
        .any(|(s, _)| s.metadata.contains(rules::scope::SCOPE_KEY_TEXT))
    {
        tx.scope_freed(team_id);
    }
    // Each completion readies nothing unless the task blocks others.
    let blocking: Vec<String> = done
        .values()
        .filter(|(_, (_, blocks))| !blocks.is_empty())
        .map(|(state, _)| state.id.clone())
        .collect();
    if !blocking.is_empty() {
        let deltas = vec![-1; blocking.len()];
        for ready in deps::adjust_dependents_of(tx, team_id, &blocking, &deltas).await? {
            tx.task_ready(team_id, ready);
        }
    }
    let mut tasks = Vec::with_capacity(ids.len());
    for id in &ids {
        let (state, edges) = done.remove(id).expect("every id was completed");
        let task = state.into_task(edges);
        append_event(tx, team_id, "task.completed", &task)?;
        tasks.push(task);
    }
    Ok(tasks)
}

/// Why `id` could not be completed by `caller`: `TaskState::complete` on its row as it stands.
async fn refusal(tx: &mut Tx, caller: &Caller, id: &str) -> StoreError {
    match load(tx, caller.team_id, id).await {
        Err(e) => e,
        Ok(mut task) => task.complete(caller, None).err().unwrap_or_else(|| {
            StoreError::Internal(format!("task {id} could be completed but was not"))
        }),
    }
}
