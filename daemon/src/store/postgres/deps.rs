//! Dependency edges: blockers, cycle detection, and the unmet-blocker counter that keeps the
//! claim one indexed query.

use super::super::rules;
use super::super::StoreResult;
use super::tx::Tx;
use crate::hub::ReadyTask;
use huddle_wire::TaskStatus;
use std::collections::{HashMap, HashSet};

pub async fn task_status(tx: &mut Tx, team_id: i64, id: &str) -> StoreResult<Option<TaskStatus>> {
    let status: Option<String> =
        sqlx::query_scalar("select status from tasks where team_id = $1 and id = $2")
            .bind(team_id)
            .bind(id)
            .fetch_optional(tx.conn())
            .await?;
    Ok(status.and_then(|s| TaskStatus::parse(&s)))
}

/// Makes `task` blocked by `blocker`: unknown blockers and self-blocking are refused (400),
/// an edge that would close a cycle is refused naming the cycle (409).
pub async fn add_blocker(
    tx: &mut Tx,
    team_id: i64,
    task: &str,
    blocker: &str,
    field: &str,
) -> StoreResult<()> {
    if task == blocker {
        return Err(rules::self_blocking(task, field));
    }
    let Some(blocker_status) = task_status(tx, team_id, blocker).await? else {
        return Err(rules::unknown_blocker(blocker, field));
    };
    if let Some(path) = path_between(tx, team_id, blocker, task).await? {
        return Err(rules::dependency_cycle(task, blocker, path));
    }
    let inserted = sqlx::query(
        "insert into task_deps (team_id, task_id, blocker_id) values ($1, $2, $3) on conflict do nothing",
    )
    .bind(team_id)
    .bind(task)
    .bind(blocker)
    .execute(tx.conn())
    .await?
    .rows_affected();
    if inserted == 1 && blocker_status != TaskStatus::Completed {
        adjust_unmet(tx, team_id, task, 1).await?;
    }
    Ok(())
}

pub async fn remove_blocker(
    tx: &mut Tx,
    team_id: i64,
    task: &str,
    blocker: &str,
) -> StoreResult<()> {
    let removed = sqlx::query(
        "delete from task_deps where team_id = $1 and task_id = $2 and blocker_id = $3",
    )
    .bind(team_id)
    .bind(task)
    .bind(blocker)
    .execute(tx.conn())
    .await?
    .rows_affected();
    if removed == 1 && task_status(tx, team_id, blocker).await? != Some(TaskStatus::Completed) {
        adjust_unmet(tx, team_id, task, -1).await?;
    }
    Ok(())
}

async fn adjust_unmet(tx: &mut Tx, team_id: i64, task: &str, delta: i64) -> StoreResult<()> {
    sqlx::query(
        "update tasks set unmet_blockers = unmet_blockers + $3 where team_id = $1 and id = $2",
    )
    .bind(team_id)
    .bind(task)
    .bind(delta)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// Keeps dependents' counters right when tasks enter (`-1`) or leave (`+1`) `completed`:
/// one statement for all of them. Returns the dependents this left ready to claim.
pub async fn adjust_dependents_of(
    tx: &mut Tx,
    team_id: i64,
    tasks: &[String],
    deltas: &[i64],
) -> StoreResult<Vec<ReadyTask>> {
    let rows: Vec<(String, Option<String>, bool)> = sqlx::query_as(
        "update tasks as t set unmet_blockers = t.unmet_blockers + s.total
         from (select d.task_id, sum(c.delta) as total
               from task_deps d join unnest($2::text[], $3::bigint[]) as c(id, delta)
                 on d.blocker_id = c.id
               where d.team_id = $1
               group by d.task_id) as s
         where t.team_id = $1 and t.id = s.task_id
         returning t.prefix, t.owner, t.status = 'pending' and t.unmet_blockers = 0",
    )
    .bind(team_id)
    .bind(tasks)
    .bind(deltas)
    .fetch_all(tx.conn())
    .await?;
    Ok(rows
        .into_iter()
        .filter(|(_, _, ready)| *ready)
        .map(|(prefix, owner, _)| ReadyTask { prefix, owner })
        .collect())
}

/// Those of `ids` that are ready to claim now (pending, no unmet blocker).
pub async fn ready_among(tx: &mut Tx, team_id: i64, ids: &[String]) -> StoreResult<Vec<ReadyTask>> {
    let rows: Vec<(String, Option<String>)> = sqlx::query_as(
        "select prefix, owner from tasks
         where team_id = $1 and id = any($2) and status = 'pending' and unmet_blockers = 0",
    )
    .bind(team_id)
    .bind(ids)
    .fetch_all(tx.conn())
    .await?;
    Ok(rows
        .into_iter()
        .map(|(prefix, owner)| ReadyTask { prefix, owner })
        .collect())
}

/// The path of ids from `from` along `blockedBy` edges to `to`, if there is one. Breadth-first,
/// one query per level over the whole frontier, each task visited once.
async fn path_between(
    tx: &mut Tx,
    team_id: i64,
    from: &str,
    to: &str,
) -> StoreResult<Option<Vec<String>>> {
    let mut parent: HashMap<String, String> = HashMap::from([(from.to_string(), String::new())]);
    let mut seen: HashSet<String> = HashSet::from([from.to_string()]);
    let mut frontier = vec![from.to_string()];
    while !frontier.is_empty() {
        if frontier.iter().any(|n| n == to) {
            let mut path = vec![to.to_string()];
            let mut cur = to.to_string();
            while let Some(p) = parent.get(&cur).filter(|p| !p.is_empty()) {
                path.push(p.clone());
                cur = p.clone();
            }
            path.reverse();
            return Ok(Some(path));
        }
        let edges: Vec<(String, String)> = sqlx::query_as(
            "select task_id, blocker_id from task_deps where team_id = $1 and task_id = any($2)",
        )
        .bind(team_id)
        .bind(&frontier)
        .fetch_all(tx.conn())
        .await?;
        frontier = Vec::new();
        for (node, next) in edges {
            if seen.insert(next.clone()) {
                parent.insert(next.clone(), node);
                frontier.push(next);
            }
        }
    }
    Ok(None)
}
