//! Saving a task's state back in one statement; the transitions are `rules::TaskState`'s.

use super::super::error::StoreResult;
use super::super::rules::{scope, TaskState};
use super::deps;
use super::rows::{append_task_event, edges_of};
use super::writer::WriteCtx;
use crate::hub::Publish;
use huddle_wire::Task;
use rusqlite::params;

/// Writes the state back by the save rules ([`TaskState::prepare_save`]), keeps dependents'
/// unmet counters in step with a change into or out of `completed`, records `event`, and
/// returns the task as sent on the wire.
pub fn save(ctx: &mut WriteCtx<'_>, mut state: TaskState, event: &str) -> StoreResult<Task> {
    state.prepare_save(ctx.now_ms);
    ctx.count_saved(&state)?;
    ctx.conn
        .prepare_cached(
            "update tasks set subject = ?3, description = ?4, active_form = ?5, status = ?6, owner = ?7,
                    claimed_by = ?8, lease_expires_at = ?9, attempts = ?10, metadata = ?11, result = ?12,
                    failure_reason = ?13, version = ?14, updated_at = ?15
             where team_id = ?1 and id = ?2",
        )?
        .execute(params![
            state.team_id,
            state.id,
            state.subject,
            state.description,
            state.active_form,
            state.status.as_str(),
            state.owner,
            state.claimed_by,
            state.lease_expires_at,
            state.attempts,
            state.metadata,
            state.result,
            state.failure_reason,
            state.version,
            state.updated_at
        ])?;
    let (team_id, id) = (state.team_id, state.id.clone());
    let delta = state.dependents_delta();
    let may_be_ready = state.may_be_ready();
    let frees_scope = scope::frees_scope(&state, event);
    let edges = edges_of(ctx.conn, team_id, &id)?;
    // With no dependents (`blocks`), no counter to adjust.
    let blocks_any = !edges.1.is_empty();
    let task = state.into_task(edges);
    if let Some(delta) = delta.filter(|_| blocks_any) {
        for (dependent, ready) in deps::adjust_dependents(ctx.conn, team_id, &id, delta)? {
            ctx.ready(team_id, &dependent, ready);
        }
    }
    append_task_event(ctx, team_id, event, &task)?;
    if may_be_ready {
        if let Some(ready) = deps::ready_task(ctx.conn, team_id, &id)? {
            ctx.ready(team_id, &id, ready);
        }
    }
    if frees_scope {
        ctx.publish(team_id, Publish::TasksChanged);
    }
    Ok(task)
}
