//! Dependency edges: adding and removing blockers, cycle detection, and the unmet-blocker
//! counter that keeps the claim a single indexed query.

use super::super::{StoreError, StoreResult};
use huddle_wire::codes;
use huddle_wire::TaskStatus;
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::{HashMap, VecDeque};

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
/// completed state. Runs in the same transaction as the status change.
pub fn adjust_dependents(
    conn: &Connection,
    team_id: i64,
    task: &str,
    delta: i64,
) -> StoreResult<usize> {
    Ok(conn
        .prepare_cached(
            "update tasks set unmet_blockers = unmet_blockers + ?3
             where team_id = ?1 and id in (select task_id from task_deps where team_id = ?1 and blocker_id = ?2)",
        )?
        .execute(params![team_id, task, delta])?)
}

/// Breadth-first along `blockedBy` edges from `from`; the path of ids ending at `to`, if any.
fn path_between(
    conn: &Connection,
    team_id: i64,
    from: &str,
    to: &str,
) -> StoreResult<Option<Vec<String>>> {
    let mut stmt = conn
        .prepare_cached("select blocker_id from task_deps where team_id = ?1 and task_id = ?2")?;
    let mut parent: HashMap<String, String> = HashMap::new();
    let mut queue = VecDeque::from([from.to_string()]);
    parent.insert(from.to_string(), String::new());
    while let Some(node) = queue.pop_front() {
        if node == to {
            let mut path = vec![node.clone()];
            let mut cur = node;
            while let Some(p) = parent.get(&cur).filter(|p| !p.is_empty()) {
                path.push(p.clone());
                cur = p.clone();
            }
            path.reverse();
            return Ok(Some(path));
        }
        let next: Vec<String> = stmt
            .query_map(params![team_id, node], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        for n in next {
            if !parent.contains_key(&n) {
                parent.insert(n.clone(), node.clone());
                queue.push_back(n);
            }
        }
    }
    Ok(None)
}
