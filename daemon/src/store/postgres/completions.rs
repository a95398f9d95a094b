//! Completing tasks: every listed task or none, in a handful of statements whatever their
//! number. The rows and their edges are read in one query, each is completed by the shared
//! rule (`TaskState::complete`), and all are saved together.

use super::super::rules::{self, TaskState, STATE_COLUMNS};
use super::super::{Caller, StoreError, StoreResult};
use super::task_state::{edges_from_row, save_all_with_edges, state_from_row, Edges, EDGE_COLUMNS};
use super::tx::Tx;
use huddle_wire::{Task, TaskStatus};
use std::collections::HashMap;

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
    tx.lock_team(team_id).await?;
    let ids: Vec<String> = items.iter().map(|(id, _)| id.clone()).collect();
    let rows = sqlx::query(&format!(
        "select {STATE_COLUMNS}, {EDGE_COLUMNS} from tasks where team_id = $1 and id = any($2)"
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
