//! `task_list` over MCP answers compactly: a model reads every byte of it each time it looks
//! for work. Each task keeps only what picking work needs — `id`, `subject`, `status`, `owner`,
//! `claimedBy` and `leaseExpiresAt` (while in progress), `blockedBy` (the blockers not yet
//! completed: empty means nothing holds it back, as the skills' `blockedBy.length === 0` rule
//! reads it) and `doneBlockers` (the completed ones, when any). `task_get` answers a task whole;
//! REST's `GET …/tasks` is unchanged.

use crate::http::error::ApiResult;
use crate::http::AppState;
use crate::store::Caller;
use huddle_wire::{Task, TaskList, TaskStatus};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// The page with each task compact; blockers outside the page are read for their status.
pub async fn compact(state: &AppState, caller: &Caller, list: TaskList) -> ApiResult<Value> {
    let mut status: HashMap<String, TaskStatus> = list
        .tasks
        .iter()
        .map(|t| (t.id.clone(), t.status))
        .collect();
    for blocker in list.tasks.iter().flat_map(|t| &t.blocked_by) {
        if !status.contains_key(blocker) {
            // Retention may have removed a finished task's finished blocker: shown as open.
            match state.store.get_task(caller.team_id, blocker).await {
                Ok(task) => {
                    status.insert(task.id, task.status);
                }
                Err(crate::store::StoreError::NotFound { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    let tasks: Vec<Value> = list.tasks.iter().map(|t| one(t, &status)).collect();
    Ok(json!({ "tasks": tasks, "next": list.next }))
}

fn one(t: &Task, status: &HashMap<String, TaskStatus>) -> Value {
    let (done, open): (Vec<&String>, Vec<&String>) = t
        .blocked_by
        .iter()
        .partition(|b| status.get(*b) == Some(&TaskStatus::Completed));
    let mut v = Map::new();
    v.insert("id".into(), json!(t.id));
    v.insert("subject".into(), json!(t.subject));
    v.insert("status".into(), json!(t.status));
    if let Some(owner) = &t.owner {
        v.insert("owner".into(), json!(owner));
    }
    if t.status == TaskStatus::InProgress {
        v.insert("claimedBy".into(), json!(t.claimed_by));
        v.insert("leaseExpiresAt".into(), json!(t.lease_expires_at));
    }
    v.insert("blockedBy".into(), json!(open));
    if !done.is_empty() {
        v.insert("doneBlockers".into(), json!(done));
    }
    Value::Object(v)
}

/// The output schema of the compact list.
pub fn schema() -> Value {
    let ids = json!({ "type": "array", "items": { "type": "string" } });
    json!({
        "type": "object",
        "properties": {
            "tasks": { "type": "array", "items": {
                "type": "object",
                "properties": {
                    "id": { "type": "string" },
                    "subject": { "type": "string" },
                    "status": { "$ref": "#/components/schemas/TaskStatus" },
                    "owner": { "type": "string" },
                    "claimedBy": { "type": ["string", "null"] },
                    "leaseExpiresAt": { "type": ["string", "null"] },
                    "blockedBy": ids,
                    "doneBlockers": ids,
                },
                "required": ["id", "subject", "status", "blockedBy"],
            }},
            "next": { "type": ["string", "null"] },
        },
        "required": ["tasks", "next"],
    })
}
