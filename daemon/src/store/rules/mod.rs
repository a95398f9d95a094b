//! The store's rules, shared by every backend: what a valid task, message or memory change is,
//! who may act on a claim, what a lease expiry does, and the errors that say so. Backends only
//! load and save rows; a rule changed here changes for SQLite and PostgreSQL at once.
//! A task's transitions are in `task_state`, blocker edges and the cycle search in `blockers`,
//! the bus's rules in `messages`, message search's words in `search`, shared memory's in
//! `memory`, input checks in `validate`, which tasks a claim filtered by project may take in
//! `project`, which tasks may not be in progress together (their file scopes) in `scope`.

mod blockers;
mod lists;
mod memory;
mod memory_patch;
mod messages;
pub mod project;
pub mod quota;
pub mod scope;
mod search;
pub mod spend;
pub mod task_event;
mod task_state;
mod task_usage;
pub mod validate;

pub use blockers::{
    check_blockers, dependency_cycle, self_blocking, unknown_blocker, walk_too_large, BlockerGraph,
};
pub use lists::{
    json_len, take_page, take_task_page, task_bytes, task_query, PageBudget, TaskQuery,
};
pub use memory::{changed_memory, MemoryChangeKind, MemoryLimits};
pub use messages::{
    at_message, check_ack, is_group_recipient, new_message, unknown_recipient, validate_post,
};
pub use project::ProjectFilter;
pub use search::{fts5_query, search_words, team_words, tsquery};
pub use task_state::{
    check_hand_transition, ensure_holder, failure, is_closed, is_ready, lease_expiry, lease_until,
    status_clears_claim, TaskEdges, TaskState, STATE_COLUMNS,
};
pub use task_usage::TaskUsageDelta;

use super::error::{StoreError, StoreResult};
use crate::config::LimitSettings as Limits;
use huddle_wire::codes;
use huddle_wire::limits::MAX_ATTEMPTS_CEILING;
use huddle_wire::{Agent, NewTask, Role, TaskPatch, Team};
use serde_json::Value;

/// RFC 3339 in UTC with milliseconds, e.g. `2026-11-21T08:00:00.000Z`.
pub fn fmt_time(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Stored JSON text back to a value.
pub fn parse_json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// Task ids in id order: `TEST-2` before `TEST-10`.
pub fn sort_ids(ids: &mut [String]) {
    ids.sort_by_cached_key(|id| match id.rsplit_once('-') {
        Some((prefix, n)) => (prefix.to_string(), n.parse::<i64>().unwrap_or(i64::MAX)),
        None => (id.clone(), 0),
    });
}

/// Where an item of a batch is named in errors: `subject` alone, `[2].subject` in a batch.
pub fn batch_field(batch_len: usize, i: usize, field: &str) -> String {
    if batch_len == 1 {
        field.to_string()
    } else {
        format!("[{i}].{field}")
    }
}

/// The size of a task batch.
pub fn check_task_batch(len: usize, limits: &Limits) -> StoreResult<()> {
    if len == 0 {
        return Err(StoreError::invalid("tasks", "the batch is empty"));
    }
    if len > limits.max_batch {
        return Err(StoreError::invalid(
            "tasks",
            format!(
                "a batch holds at most {} tasks, got {len}",
                limits.max_batch
            ),
        ));
    }
    Ok(())
}

/// A new task's fields, before any id is assigned.
pub fn validate_new_task(
    t: &NewTask,
    at: &dyn Fn(&str) -> String,
    limits: &Limits,
) -> StoreResult<()> {
    validate::text(&at("subject"), &t.subject, limits.max_subject_chars)?;
    if let Some(d) = &t.description {
        validate::optional_text(&at("description"), d, limits.max_text_chars)?;
    }
    if let Some(a) = &t.active_form {
        validate::optional_text(&at("activeForm"), a, limits.max_subject_chars)?;
    }
    if let Some(owner) = t.owner.as_deref().filter(|o| !o.is_empty()) {
        validate::name(&at("owner"), owner)?;
    }
    if let Some(m) = &t.metadata {
        validate::object(&at("metadata"), m)?;
        validate::depth(&at("metadata"), m, limits.max_json_depth)?;
        project::check_metadata(&at("metadata"), m)?;
        scope::check_metadata(&at("metadata"), m)?;
    }
    if t.blocked_by.len() > limits.max_blocked_by {
        return Err(StoreError::invalid(
            &at("blockedBy"),
            format!(
                "a task may have at most {} blockers, got {}",
                limits.max_blocked_by,
                t.blocked_by.len()
            ),
        ));
    }
    if let Some(max) = t.max_attempts {
        if !(1..=MAX_ATTEMPTS_CEILING).contains(&max) {
            return Err(StoreError::invalid(
                &at("maxAttempts"),
                format!("`maxAttempts` must be between 1 and {MAX_ATTEMPTS_CEILING}"),
            ));
        }
    }
    Ok(())
}

/// How a new task gets its id: its explicit id (checked against `prefix` when both are given),
/// or the next number of its prefix, which the backend looks up.
pub enum IdRequest {
    Explicit(String, i64),
    Next(String),
}

pub fn id_request(t: &NewTask, at: &dyn Fn(&str) -> String) -> StoreResult<IdRequest> {
    match (&t.id, &t.prefix) {
        (Some(id), prefix) => {
            let (p, n) = validate::task_id(&at("id"), id)?;
            if let Some(prefix) = prefix {
                if validate::prefix(&at("prefix"), prefix)? != p {
                    return Err(StoreError::invalid(
                        &at("prefix"),
                        format!("id {id} does not start with prefix {prefix}"),
                    ));
                }
            }
            Ok(IdRequest::Explicit(p, n))
        }
        (None, Some(prefix)) => Ok(IdRequest::Next(validate::prefix(&at("prefix"), prefix)?)),
        (None, None) => Err(StoreError::invalid(
            &at("id"),
            "give the task an `id` (TEST-001) or a `prefix` (TEST)",
        )),
    }
}

/// A new team, or the refusal when the name was taken (`inserted` is false).
pub fn created_team(name: &str, now: i64, inserted: bool) -> StoreResult<Team> {
    if !inserted {
        return Err(StoreError::conflict(
            codes::DUPLICATE_TEAM,
            format!("team {name} already exists"),
        ));
    }
    Ok(Team {
        name: name.to_string(),
        created_at: fmt_time(now),
    })
}

/// Whether setting `token_hash` on an agent brings a revoked one back (a rotation of a revoked
/// agent), which counts against `max_agents_per_team` as adding one does.
pub fn reactivates(revoked: bool, token_hash: Option<&str>) -> bool {
    revoked && token_hash.is_some()
}

/// A team of `agents` (revoked ones not counted) may take one more while under `max`.
pub fn check_agent_count(agents: usize, max: usize) -> StoreResult<()> {
    if agents >= max {
        return Err(StoreError::Conflict {
            code: codes::TEAM_LIMIT,
            message: format!(
                "the team has {agents} agents; the limit is {max} ([limits] max_agents_per_team): revoke one first"
            ),
            details: serde_json::json!({ "limit": "max_agents_per_team", "max": max }),
        });
    }
    Ok(())
}

/// A new agent, or the refusal when the name was taken (`inserted` is false).
pub fn created_agent(name: &str, role: Role, inserted: bool) -> StoreResult<Agent> {
    if !inserted {
        return Err(StoreError::conflict(
            codes::DUPLICATE_AGENT,
            format!("agent {name} already exists in this team"),
        ));
    }
    Ok(Agent {
        name: name.to_string(),
        role,
        last_seen_at: None,
    })
}

/// What a token change stores: the new hash (a random, never-issued one when revoking), the
/// revocation time, and the event to record.
pub struct TokenChange {
    pub hash: String,
    pub revoked_at: Option<i64>,
    pub event: &'static str,
}

pub fn token_change(token_hash: Option<&str>, now: i64) -> TokenChange {
    match token_hash {
        Some(h) => TokenChange {
            hash: h.to_string(),
            revoked_at: None,
            event: "agent.rotated",
        },
        None => TokenChange {
            hash: format!("revoked:{}", uuid::Uuid::new_v4()),
            revoked_at: Some(now),
            event: "agent.revoked",
        },
    }
}

/// The agent a token change is reported with (its stored role text).
pub fn changed_agent(name: &str, role: &str) -> Agent {
    Agent {
        name: name.to_string(),
        role: role.parse().unwrap_or(Role::Observer),
        last_seen_at: None,
    }
}

pub fn duplicate_task(id: &str) -> StoreError {
    StoreError::Conflict {
        code: codes::DUPLICATE_ID,
        message: format!("task {id} already exists"),
        details: serde_json::json!({ "id": id }),
    }
}

/// Validates and applies a patch's plain fields (not status, not edges).
pub fn apply_patch_fields(
    task: &mut TaskState,
    patch: &mut TaskPatch,
    limits: &Limits,
) -> StoreResult<()> {
    if let Some(s) = patch.subject.take() {
        validate::text("subject", &s, limits.max_subject_chars)?;
        task.subject = s;
    }
    if let Some(d) = patch.description.take() {
        validate::optional_text("description", &d, limits.max_text_chars)?;
        task.description = d;
    }
    if let Some(a) = patch.active_form.take() {
        validate::optional_text("activeForm", &a, limits.max_subject_chars)?;
        task.active_form = Some(a);
    }
    if let Some(owner) = patch.owner.take() {
        let owner = owner.filter(|o| !o.is_empty());
        if let Some(o) = &owner {
            validate::name("owner", o)?;
        }
        task.owner = owner;
    }
    if let Some(m) = patch.metadata.take() {
        validate::object("metadata", &m)?;
        validate::depth("metadata", &m, limits.max_json_depth)?;
        project::check_metadata("metadata", &m)?;
        scope::check_metadata("metadata", &m)?;
        let mut merged = parse_json(&task.metadata);
        json_patch::merge(&mut merged, &m);
        task.metadata = merged.to_string();
    }
    if patch.add_blocked_by.len() > limits.max_blocked_by {
        return Err(StoreError::invalid(
            "addBlockedBy",
            format!("a task may have at most {} blockers", limits.max_blocked_by),
        ));
    }
    Ok(())
}

/// After adding edges: the task's blocker count must stay within the limit.
pub fn check_blocker_count(count: usize, limits: &Limits) -> StoreResult<()> {
    if count > limits.max_blocked_by {
        return Err(StoreError::invalid(
            "addBlockedBy",
            format!(
                "a task may have at most {} blockers; this would make {count}",
                limits.max_blocked_by
            ),
        ));
    }
    Ok(())
}

/// Checks `if_match` against the current version.
pub fn check_version(if_match: Option<i64>, current: i64) -> StoreResult<()> {
    match if_match {
        Some(expected) if expected != current => {
            Err(StoreError::StaleVersion { expected, current })
        }
        _ => Ok(()),
    }
}

/// The JSON an event is streamed as; its `data` is already JSON text.
pub fn event_json(seq: i64, kind: &str, data: &str, created_at_ms: i64) -> String {
    // A JSON string's text (quoted, escaped); writing a `Value` cannot fail.
    let kind_json = serde_json::Value::from(kind).to_string();
    format!(
        r#"{{"seq":{seq},"type":{kind_json},"data":{data},"createdAt":"{}"}}"#,
        fmt_time(created_at_ms)
    )
}
