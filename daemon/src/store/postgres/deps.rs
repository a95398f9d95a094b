//! Dependency edges: blockers, cycle detection, and the unmet-blocker counter that keeps the
//! claim one indexed query.

use super::super::error::StoreResult;
use super::super::rules;
use super::rows::TASK_PROJECT;
use super::tx::Tx;
use crate::hub::ReadyTask;
use huddle_wire::TaskStatus;
use std::collections::HashMap;

pub async fn task_status(tx: &mut Tx, team_id: i64, id: &str) -> StoreResult<Option<TaskStatus>> {
    let status: Option<String> =
        sqlx::query_scalar("select status from tasks where team_id = $1 and id = $2 for share")
            .bind(team_id)
            .bind(id)
            .fetch_optional(tx.conn())
            .await?;
    Ok(status.and_then(|s| TaskStatus::parse(&s)))
}

/// Makes `task` blocked by each of `blockers`, checked in order by [`rules::check_blockers`]:
/// self-blocking and unknown blockers are refused (400), an edge that would close a cycle is
/// refused naming the cycle (409). The part of the graph the blockers reach is read in one
/// recursive query and searched in memory: a walk of one query per level per edge made the
/// largest patch the limits allow hold the team's lock for 11 s.
pub async fn add_blockers(
    tx: &mut Tx,
    team_id: i64,
    task: &str,
    blockers: &[String],
    field: &str,
    walk_budget: usize,
) -> StoreResult<()> {
    if blockers.is_empty() {
        return Ok(());
    }
    let statuses: HashMap<String, String> =
        // Share-locked: a completion of a blocker (which takes no team lock) either commits
        // before this reads it, or waits for this edge and so sees it.
        sqlx::query_as(
            "select id, status from tasks where team_id = $1 and id = any($2)
             order by id for share",
        )
            .bind(team_id)
            .bind(blockers)
            .fetch_all(tx.conn())
            .await?
            .into_iter()
            .collect();
    // Every `blockedBy` edge reachable from the blockers; none when nothing depends on `task`,
    // since then no new edge of it can close a cycle. At most `walk_budget` edges: the walk
    // stops pulling tasks past `walk_budget` + seeds (each task past the seeds was reached by
    // an edge that is read), and more edges than the budget refuse the change.
    let edges: Vec<(String, String)> = sqlx::query_as(
        "with recursive reach(id) as (
             select unnest($2::text[])
             where exists (select 1 from task_deps where team_id = $1 and blocker_id = $3)
             union
             select d.blocker_id from task_deps d join reach r on d.task_id = r.id
             where d.team_id = $1
         ), bounded as (select id from reach limit $4)
         select d.task_id, d.blocker_id from task_deps d join bounded r on d.task_id = r.id
         where d.team_id = $1
         limit $5",
    )
    .bind(team_id)
    .bind(blockers)
    .bind(task)
    .bind((walk_budget + blockers.len() + 1) as i64)
    .bind((walk_budget + 1) as i64)
    .fetch_all(tx.conn())
    .await?;
    if edges.len() > walk_budget {
        return Err(rules::walk_too_large(task, walk_budget));
    }
    let graph = rules::BlockerGraph::from_edges(edges);
    rules::check_blockers(task, blockers, |b| statuses.contains_key(b), &graph, field)?;
    let added: Vec<String> = sqlx::query_scalar(
        "insert into task_deps (team_id, task_id, blocker_id)
         select $1, $2, b from unnest($3::text[]) as b
         on conflict do nothing
         returning blocker_id",
    )
    .bind(team_id)
    .bind(task)
    .bind(blockers)
    .fetch_all(tx.conn())
    .await?;
    let open = added
        .iter()
        .filter(|b| statuses.get(*b).map(String::as_str) != Some(TaskStatus::Completed.as_str()))
        .count();
    if open > 0 {
        adjust_unmet(tx, team_id, task, open as i64).await?;
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
/// one statement for all of them. Returns the dependents this left ready to claim. Writers
/// without the team's lock run this at once, so the dependents are locked in id order first
/// (no deadlock between two of them), and each counter is changed on the row as the last
/// commit left it: of two completions that clear a task's last two blockers, exactly one
/// sees it reach zero and announces it ready.
pub async fn adjust_dependents_of(
    tx: &mut Tx,
    team_id: i64,
    tasks: &[String],
    deltas: &[i64],
) -> StoreResult<Vec<ReadyTask>> {
    type Row = (String, Option<String>, bool, Option<String>);
    let rows: Vec<Row> = sqlx::query_as(&format!(
        "with s as (
             select d.task_id, sum(c.delta) as total
             from task_deps d join unnest($2::text[], $3::bigint[]) as c(id, delta)
               on d.blocker_id = c.id
             where d.team_id = $1
             group by d.task_id
         ), locked as materialized (
             select t.id, s.total from tasks t join s on t.id = s.task_id
             where t.team_id = $1
             order by t.id
             for update of t
         )
         update tasks as t set unmet_blockers = t.unmet_blockers + locked.total
         from locked
         where t.team_id = $1 and t.id = locked.id
         returning t.prefix, t.owner, t.status = 'pending' and t.unmet_blockers = 0,
                   {TASK_PROJECT}"
    ))
    .bind(team_id)
    .bind(tasks)
    .bind(deltas)
    .fetch_all(tx.conn())
    .await?;
    Ok(rows
        .into_iter()
        .filter(|(_, _, ready, _)| *ready)
        .map(|(prefix, owner, _, project)| ReadyTask {
            prefix,
            owner,
            project,
        })
        .collect())
}

/// Those of `ids` that are ready to claim now (pending, no unmet blocker).
pub async fn ready_among(tx: &mut Tx, team_id: i64, ids: &[String]) -> StoreResult<Vec<ReadyTask>> {
    let rows: Vec<(String, Option<String>, Option<String>)> = sqlx::query_as(&format!(
        "select prefix, owner, {TASK_PROJECT} from tasks
         where team_id = $1 and id = any($2) and status = 'pending' and unmet_blockers = 0"
    ))
    .bind(team_id)
    .bind(ids)
    .fetch_all(tx.conn())
    .await?;
    Ok(rows
        .into_iter()
        .map(|(prefix, owner, project)| ReadyTask {
            prefix,
            owner,
            project,
        })
        .collect())
}
