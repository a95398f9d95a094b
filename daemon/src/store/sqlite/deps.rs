//! Dependency edges: adding and removing blockers, cycle detection, and the unmet-blocker
//! counter that keeps the claim a single indexed query.

use super::super::error::StoreResult;
use super::super::rules;
use super::rows::TASK_PROJECT;
use crate::hub::ReadyTask;
use huddle_wire::TaskStatus;
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::{HashMap, HashSet, VecDeque};

pub fn task_status(conn: &Connection, team_id: i64, id: &str) -> StoreResult<Option<TaskStatus>> {
    let status: Option<String> = conn
        .prepare_cached("select status from tasks where team_id = ?1 and id = ?2")?
        .query_row(params![team_id, id], |r| r.get(0))
        .optional()?;
    Ok(status.and_then(|s| TaskStatus::parse(&s)))
}

/// Makes `task` blocked by each of `blockers`, checked in order by [`rules::check_blockers`]:
/// self-blocking and unknown blockers are refused (400), an edge that would close a cycle is
/// refused naming the cycle (409). An existing edge is left alone.
pub fn add_blockers(
    conn: &Connection,
    team_id: i64,
    task: &str,
    blockers: &[String],
    field: &str,
    walk_budget: usize,
) -> StoreResult<()> {
    if blockers.is_empty() {
        return Ok(());
    }
    let mut statuses = HashMap::new();
    for blocker in blockers {
        if let Some(status) = task_status(conn, team_id, blocker)? {
            statuses.insert(blocker.as_str(), status);
        }
    }
    let graph = reachable_graph(conn, team_id, task, blockers, walk_budget)?;
    rules::check_blockers(task, blockers, |b| statuses.contains_key(b), &graph, field)?;
    for blocker in blockers {
        let inserted = conn
            .prepare_cached(
                "insert or ignore into task_deps (team_id, task_id, blocker_id) values (?1, ?2, ?3)",
            )?
            .execute(params![team_id, task, blocker])?;
        if inserted == 1 && statuses.get(blocker.as_str()) != Some(&TaskStatus::Completed) {
            adjust_unmet(conn, team_id, task, 1)?;
        }
    }
    Ok(())
}

/// Every `blockedBy` edge reachable from `blockers`, read breadth-first with one indexed
/// lookup per task (in process, so a lookup costs microseconds); none when nothing depends on
/// `task` (then no new edge of it can close a cycle), which makes adding blockers to a new task
/// one cheap query however long their chains are. Reading more than `budget` edges is refused:
/// this runs inside the writer every team shares.
fn reachable_graph(
    conn: &Connection,
    team_id: i64,
    task: &str,
    blockers: &[String],
    budget: usize,
) -> StoreResult<rules::BlockerGraph> {
    let has_dependents = conn
        .prepare_cached("select 1 from task_deps where team_id = ?1 and blocker_id = ?2 limit 1")?
        .query_row(params![team_id, task], |_| Ok(()))
        .optional()?
        .is_some();
    if !has_dependents {
        return Ok(rules::BlockerGraph::default());
    }
    let mut lookup = conn
        .prepare_cached("select blocker_id from task_deps where team_id = ?1 and task_id = ?2")?;
    let mut seen: HashSet<String> = blockers.iter().cloned().collect();
    let mut queue: VecDeque<String> = seen.iter().cloned().collect();
    let mut edges = Vec::new();
    while let Some(node) = queue.pop_front() {
        let mut rows = lookup.query(params![team_id, node])?;
        while let Some(row) = rows.next()? {
            let blocker: String = row.get(0)?;
            if edges.len() == budget {
                return Err(rules::walk_too_large(task, budget));
            }
            if seen.insert(blocker.clone()) {
                queue.push_back(blocker.clone());
            }
            edges.push((node.clone(), blocker));
        }
    }
    Ok(rules::BlockerGraph::from_edges(edges))
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
/// completed state, and returns the dependents this left ready to claim (with their ids). Runs
/// in the same transaction as the status change.
pub fn adjust_dependents(
    conn: &Connection,
    team_id: i64,
    task: &str,
    delta: i64,
) -> StoreResult<Vec<(String, ReadyTask)>> {
    let mut ready = Vec::new();
    let mut stmt = conn.prepare_cached(&format!(
        "update tasks set unmet_blockers = unmet_blockers + ?3
         where team_id = ?1 and id in (select task_id from task_deps where team_id = ?1 and blocker_id = ?2)
         returning prefix, owner, status = 'pending' and unmet_blockers = 0, {TASK_PROJECT}, id"
    ))?;
    let mut rows = stmt.query(params![team_id, task, delta])?;
    while let Some(r) = rows.next()? {
        if r.get::<_, bool>(2)? {
            let task = ReadyTask {
                prefix: r.get(0)?,
                owner: r.get(1)?,
                project: r.get(3)?,
            };
            ready.push((r.get(4)?, task));
        }
    }
    Ok(ready)
}

/// The task as a claimer would see it if it is ready to claim now (pending, no unmet blocker).
pub fn ready_task(conn: &Connection, team_id: i64, id: &str) -> StoreResult<Option<ReadyTask>> {
    Ok(conn
        .prepare_cached(&format!(
            "select prefix, owner, {TASK_PROJECT} from tasks
             where team_id = ?1 and id = ?2 and status = 'pending' and unmet_blockers = 0"
        ))?
        .query_row(params![team_id, id], |r| {
            Ok(ReadyTask {
                prefix: r.get(0)?,
                owner: r.get(1)?,
                project: r.get(2)?,
            })
        })
        .optional()?)
}
