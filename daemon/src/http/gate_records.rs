//! `gates` on a claimed or read task: what the people asked before it could be claimed and
//! what they decided, so the worker that takes it sees the decision it works under.

use super::error::ApiResult;
use super::AppState;
use crate::store::gate_decisions::{question_ids, record};
use crate::store::StoreError;
use huddle_wire::Task;

/// Task `id` as read, with its gates (task get, over HTTP and MCP).
pub async fn read_task(state: &AppState, team_id: i64, id: &str) -> ApiResult<Task> {
    let task = state.store.get_task(team_id, id).await?;
    with_gates(state, team_id, task).await
}

/// Fills `task.gates` from its `HUMAN-NNN` blockers; a task never gated costs no read.
pub async fn with_gates(state: &AppState, team_id: i64, mut task: Task) -> ApiResult<Task> {
    let ids: Vec<String> = question_ids(&task.blocked_by).cloned().collect();
    for qid in ids {
        match state.store.get_task(team_id, &qid).await {
            Ok(q) => task.gates.extend(record(&q, &task.id)),
            // Deleted meanwhile: nothing to show.
            Err(StoreError::NotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(task)
}
