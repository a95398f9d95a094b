//! Dependency edges: adding and removing blockers, cycle detection, and the unmet-blocker
//! counter that keeps the claim a single indexed query.

use super::super::{StoreError, StoreResult};
use crate::hub::ReadyTask;
use huddle_wire::codes;
use huddle_wire::TaskStatus;
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::HashMap;

pub fn task_status(conn: &Connection, team_id: i64, id: &str) -> StoreResult<Option<TaskStatus>> {
    let status: Option<String> = conn
        .prepare_cached("select status from tasks where team_id = ?1 and id = ?2")?
        .query_row(params![team_id, id], |r| r.get(0))
        .optional()?;
    Ok(status.and_then(|s| TaskStatus::parse(&s)))
}

/// Makes `task` blocked by `blocker`. Refuses unknown blockers (400), self-blocking (400) and
/// edges that would close a cycle (409, naming the cycle). An existing edge is left alone.
pub fn add_blocker(
    conn: &Connection,
    team_id: i64,
    task: &str,
    blocker: &str,
    field: &str,
) -> StoreResult<()> {
    if task == blocker {
        return Err(StoreError::invalid(
            field,
            format!("task {task} cannot block itself"),
        ));
    }
    let Some(blocker_status) = task_status(conn, team_id, blocker)? else {
        return Err(StoreError::Invalid {
            field: field.to_string(),
            message: format!("unknown blocker task {blocker}"),
            details: serde_json::json!({ "unknownTask": blocker }),
        });
    };
    if let Some(cycle) = path_between(conn, team_id, blocker, task)? {
        let mut names = vec![task.to_string()];
        names.extend(cycle);
        return Err(StoreError::Conflict {
            code: codes::DEPENDENCY_CYCLE,
            message: format!(
                "adding {blocker} as a blocker of {task} would close a cycle: {}",
                names.join(" → ")
            ),
            details: serde_json::json!({ "cycle": names }),
        });
    }
    let inserted = conn
        .prepare_cached(
            "insert or ignore into task_deps (team_id, task_id, blocker_id) values (?1, ?2, ?3)",
        )?
        .execute(params![team_id, task, blocker])?;
    if inserted == 1 && blocker_status != TaskStatus::Completed {
        adjust_unmet(conn, team_id, task, 1)?;
    }
    Ok(())
}

/// Removes the edge if present; a missing edge is not an error.
pub fn remove_blocker(
    conn: &Connection,
    team_id: i64,
    task: &str,
    blocker: &str,
) -> StoreResult<()> {
    let removed = conn
        .prepare_cached(
            "delete from task_deps where team_id = ?1 and task_id = ?2 and blocker_id = ?3",
        )?
        .execute(params![team_id, task, blocker])?;
    if removed == 1 && task_status(conn, team_id, blocker)? != Some(TaskStatus::Completed) {
        adjust_unmet(conn, team_id, task, -1)?;
    }
    Ok(())
}

fn adjust_unmet(conn: &Connection, team_id: i64, task: &str, delta: i64) -> StoreResult<()> {
    conn.prepare_cached(
        "update tasks set unmet_blockers = unmet_blockers + ?3 where team_id = ?1 and id = ?2",
    )?
    .execute(params![team_id, task, delta])?;
    Ok(())
}

/// Keeps dependents' counters right when `task` enters (`delta = -1`) or leaves (`+1`) the
/// completed state, and returns the dependents this left ready to claim. Runs in the same
/// transaction as the status change.
pub fn adjust_dependents(
    conn: &Connection,
    team_id: i64,
    task: &str,
    delta: i64,
) -> StoreResult<Vec<ReadyTask>> {
    let mut ready = Vec::new();
    let mut stmt = conn.prepare_cached(
        "update tasks set unmet_blockers = unmet_blockers + ?3
         where team_id = ?1 and id in (select task_id from task_deps where team_id = ?1 and blocker_id = ?2)
         returning prefix, owner, status = 'pending' and unmet_blockers = 0",
    )?;
    let mut rows = stmt.query(params![team_id, task, delta])?;
    while let Some(r) = rows.next()? {
        if r.get::<_, bool>(2)? {
            ready.push(ReadyTask {
                prefix: r.get(0)?,
                owner: r.get(1)?,
            });
        }
    }
    Ok(ready)
}

/// The task as a claimer would see it if it is ready to claim now (pending, no unmet blocker).
pub fn ready_task(conn: &Connection, team_id: i64, id: &str) -> StoreResult<Option<ReadyTask>> {
    Ok(conn
        .prepare_cached(
            "select prefix, owner from tasks
             where team_id = ?1 and id = ?2 and status = 'pending' and unmet_blockers = 0",
        )?
        .query_row(params![team_id, id], |r| {
            Ok(ReadyTask {
                prefix: r.get(0)?,
                owner: r.get(1)?,
            })
        })
        .optional()?)
}

/// The path of ids from `from` to `to` along `blockedBy` edges, if any. Searches from both ends
/// at once (from `from` up its blockers, from `to` down its dependents), always widening the
/// smaller frontier (in turns on a tie), each node visited once: adding a blocker to a task nothing depends on yet
/// (every task of a new batch) costs one query however long the blocker's chain is.
fn path_between(
    conn: &Connection,
    team_id: i64,
    from: &str,
    to: &str,
) -> StoreResult<Option<Vec<String>>> {
    let mut blockers = conn
        .prepare_cached("select blocker_id from task_deps where team_id = ?1 and task_id = ?2")?;
    let mut dependents = conn
        .prepare_cached("select task_id from task_deps where team_id = ?1 and blocker_id = ?2")?;
    // Node → the node it was reached from (toward `from`, or toward `to`).
    let mut up: HashMap<String, String> = HashMap::from([(from.to_string(), String::new())]);
    let mut down: HashMap<String, String> = HashMap::from([(to.to_string(), String::new())]);
    let mut up_frontier = vec![from.to_string()];
    let mut down_frontier = vec![to.to_string()];
    // On a tie, take turns (starting downward: a new task has no dependents).
    let mut widened_up = true;
    let meeting = loop {
        if let Some(m) = up_frontier.iter().find(|n| down.contains_key(*n)) {
            break m.clone();
        }
        if up_frontier.is_empty() || down_frontier.is_empty() {
            return Ok(None);
        }
        let widen_up = match up_frontier.len().cmp(&down_frontier.len()) {
            std::cmp::Ordering::Less => true,
            std::cmp::Ordering::Greater => false,
            std::cmp::Ordering::Equal => !widened_up,
        };
        widened_up = widen_up;
        let (stmt, seen, frontier, other) = if widen_up {
            (&mut blockers, &mut up, &mut up_frontier, &down)
        } else {
            (&mut dependents, &mut down, &mut down_frontier, &up)
        };
        let mut next = Vec::new();
        let mut met = None;
        for node in frontier.drain(..) {
            let ids: Vec<String> = stmt
                .query_map(params![team_id, node], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            for id in ids {
                if !seen.contains_key(&id) {
                    seen.insert(id.clone(), node.clone());
                    if other.contains_key(&id) {
                        met = Some(id.clone());
                    }
                    next.push(id);
                }
            }
        }
        *frontier = next;
        if let Some(m) = met {
            break m;
        }
    };
    let mut path = vec![meeting.clone()];
    let mut cur = meeting.clone();
    while let Some(p) = up.get(&cur).filter(|p| !p.is_empty()) {
        path.push(p.clone());
        cur = p.clone();
    }
    path.reverse();
    let mut cur = meeting;
    while let Some(n) = down.get(&cur).filter(|n| !n.is_empty()) {
        path.push(n.clone());
        cur = n.clone();
    }
    Ok(Some(path))
}
