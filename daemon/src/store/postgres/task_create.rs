//! Creating a batch of tasks in a fixed number of statements whatever its size: the team's lock
//! is held for every one of them, so a batch of 1,000 must not cost 1,000 round trips.

use super::super::error::StoreResult;
use super::super::rules::{self, quota, IdRequest, TaskState};
use super::super::types::Caller;
use super::deps;
use super::rows::append_event;
use super::task_state::load_edges_of;
use super::tx::Tx;
use crate::config::LimitSettings as Limits;
use crate::hub::ReadyTask;
use huddle_wire::{NewTask, Task, TaskStatus};
use std::collections::{HashMap, HashSet};

/// One task of the batch with its id settled.
struct Planned {
    id: String,
    prefix: String,
    number: i64,
}

/// Creates every task or none: ids first, then edges (a batch may refer to its own ids), then
/// events. Errors are reported in batch order, as if the tasks were created one at a time.
pub async fn create(
    tx: &mut Tx,
    caller: &Caller,
    tasks: Vec<NewTask>,
    default_max_attempts: i64,
    limits: &Limits,
) -> StoreResult<Vec<Task>> {
    rules::check_task_batch(tasks.len(), limits)?;
    let team_id = caller.team_id;
    tx.lock_team(team_id).await?;
    let add = quota::new_tasks_usage(&tasks);
    tx.budget(team_id, limits).await?.check(&add)?;
    let planned = plan_ids(tx, team_id, &tasks, limits).await?;
    let now = tx.now_ms();
    let states: Vec<TaskState> = tasks
        .iter()
        .zip(&planned)
        .map(|(t, p)| TaskState::created(team_id, p.id.clone(), t, default_max_attempts, now))
        .collect();
    insert_rows(tx, team_id, &states, &planned).await?;
    let (ids, prefixes): (Vec<String>, Vec<String>) =
        planned.into_iter().map(|p| (p.id, p.prefix)).unzip();
    let has_edges = tasks.iter().any(|t| !t.blocked_by.is_empty());
    if has_edges {
        add_edges(tx, team_id, &tasks, &ids).await?;
    }
    // New tasks block nothing that existed before, so without edges in the batch there are none.
    let mut edges = if has_edges {
        load_edges_of(tx.conn(), team_id, &ids).await?
    } else {
        HashMap::new()
    };
    let mut created = Vec::with_capacity(ids.len());
    for state in states {
        let task_edges = edges.remove(&state.id).unwrap_or_default();
        let task = state.into_task(task_edges);
        append_event(tx, team_id, "task.created", &task)?;
        created.push(task);
    }
    let ready = if has_edges {
        deps::ready_among(tx, team_id, &ids).await?
    } else {
        created
            .iter()
            .zip(prefixes)
            .map(|(t, prefix)| ReadyTask {
                prefix,
                owner: t.owner.clone(),
                project: rules::project::of_metadata(&t.metadata),
            })
            .collect()
    };
    for task in ready {
        tx.task_ready(team_id, task);
    }
    tx.charge(team_id, &add);
    Ok(created)
}

/// Validates each task and settles its id: an explicit one, or the next number of its prefix
/// counting the tasks before it in the batch. Refuses ids that exist or repeat.
async fn plan_ids(
    tx: &mut Tx,
    team_id: i64,
    tasks: &[NewTask],
    limits: &Limits,
) -> StoreResult<Vec<Planned>> {
    let mut planned: Vec<Planned> = Vec::with_capacity(tasks.len());
    // The stored counter of each prefix asked for, and the next number after this batch's own.
    let mut stored_next: HashMap<String, i64> = HashMap::new();
    let mut batch_next: HashMap<String, i64> = HashMap::new();
    let mut seen = HashSet::new();
    for (i, t) in tasks.iter().enumerate() {
        let at = |field: &str| rules::batch_field(tasks.len(), i, field);
        let request =
            rules::validate_new_task(t, &at, limits).and_then(|_| rules::id_request(t, &at));
        let request = match request {
            Ok(r) => r,
            // A task before this one that already exists was the first error.
            Err(e) => return Err(first_taken(tx, team_id, &planned).await?.unwrap_or(e)),
        };
        let (prefix, number) = match request {
            IdRequest::Explicit(p, n) => (p, n),
            IdRequest::Next(p) => {
                if !stored_next.contains_key(&p) {
                    let next: Option<i64> = sqlx::query_scalar(
                        "select next_number from task_counters where team_id = $1 and prefix = $2",
                    )
                    .bind(team_id)
                    .bind(&p)
                    .fetch_optional(tx.conn())
                    .await?;
                    stored_next.insert(p.clone(), next.unwrap_or(1));
                }
                let next = stored_next[&p].max(batch_next.get(&p).copied().unwrap_or(0));
                (p, next)
            }
        };
        let id =
            t.id.clone()
                .unwrap_or_else(|| format!("{prefix}-{number:03}"));
        let next = batch_next.entry(prefix.clone()).or_insert(0);
        *next = (*next).max(number + 1);
        if !seen.insert((prefix.clone(), number)) {
            let repeated = rules::duplicate_task(&id);
            return Err(first_taken(tx, team_id, &planned)
                .await?
                .unwrap_or(repeated));
        }
        planned.push(Planned { id, prefix, number });
    }
    match first_taken(tx, team_id, &planned).await? {
        Some(taken) => Err(taken),
        None => Ok(planned),
    }
}

/// The duplicate-id error for the first of `planned` whose number is already stored.
async fn first_taken(
    tx: &mut Tx,
    team_id: i64,
    planned: &[Planned],
) -> StoreResult<Option<super::super::error::StoreError>> {
    if planned.is_empty() {
        return Ok(None);
    }
    let taken: Vec<(String, i64)> = sqlx::query_as(
        "select prefix, number from tasks
         where team_id = $1 and (prefix, number) in (select * from unnest($2::text[], $3::bigint[]))",
    )
    .bind(team_id)
    .bind(planned.iter().map(|p| p.prefix.clone()).collect::<Vec<_>>())
    .bind(planned.iter().map(|p| p.number).collect::<Vec<_>>())
    .fetch_all(tx.conn())
    .await?;
    let taken: HashSet<(String, i64)> = taken.into_iter().collect();
    Ok(planned
        .iter()
        .find(|p| taken.contains(&(p.prefix.clone(), p.number)))
        .map(|p| rules::duplicate_task(&p.id)))
}

/// The rows, then each prefix's counter past the highest number used: two statements.
async fn insert_rows(
    tx: &mut Tx,
    team_id: i64,
    states: &[TaskState],
    planned: &[Planned],
) -> StoreResult<()> {
    let text = |f: &dyn Fn(&TaskState) -> Option<String>| states.iter().map(f).collect::<Vec<_>>();
    sqlx::query(
        "insert into tasks (team_id, id, prefix, number, subject, description, active_form,
                            status, owner, max_attempts, metadata, created_at, updated_at)
         select $1, u.id, u.prefix, u.number, u.subject, u.description, u.active_form,
                'pending', u.owner, u.max_attempts, u.metadata, $2, $2
         from unnest($3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[],
                     $9::text[], $10::bigint[], $11::text[])
              as u(id, prefix, number, subject, description, active_form, owner, max_attempts,
                   metadata)",
    )
    .bind(team_id)
    .bind(tx.now_ms())
    .bind(text(&|s| Some(s.id.clone())))
    .bind(planned.iter().map(|p| p.prefix.clone()).collect::<Vec<_>>())
    .bind(planned.iter().map(|p| p.number).collect::<Vec<_>>())
    .bind(text(&|s| Some(s.subject.clone())))
    .bind(text(&|s| Some(s.description.clone())))
    .bind(text(&|s| s.active_form.clone()))
    .bind(text(&|s| s.owner.clone()))
    .bind(states.iter().map(|s| s.max_attempts).collect::<Vec<_>>())
    .bind(text(&|s| Some(s.metadata.clone())))
    .execute(tx.conn())
    .await?;
    let mut highest: HashMap<&str, i64> = HashMap::new();
    for p in planned {
        let n = highest.entry(p.prefix.as_str()).or_insert(p.number);
        *n = (*n).max(p.number);
    }
    let (prefixes, numbers): (Vec<String>, Vec<i64>) = highest
        .into_iter()
        .map(|(p, n)| (p.to_string(), n + 1))
        .unzip();
    sqlx::query(
        "insert into task_counters (team_id, prefix, next_number)
         select $1, u.prefix, u.next from unnest($2::text[], $3::bigint[]) as u(prefix, next)
         on conflict (team_id, prefix) do update
         set next_number = greatest(task_counters.next_number, excluded.next_number)",
    )
    .bind(team_id)
    .bind(prefixes)
    .bind(numbers)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// Adds the batch's `blockedBy` edges, checked in batch order as one `add_blockers` each would
/// be, in at most three statements. Only new tasks can block a new task, so a cycle can only
/// run through this batch's own edges: it is looked for in memory, not in the stored graph.
async fn add_edges(
    tx: &mut Tx,
    team_id: i64,
    tasks: &[NewTask],
    ids: &[String],
) -> StoreResult<()> {
    let new: HashSet<&str> = ids.iter().map(String::as_str).collect();
    let mut named: Vec<String> = tasks
        .iter()
        .flat_map(|t| &t.blocked_by)
        .filter(|b| !new.contains(b.as_str()))
        .cloned()
        .collect();
    named.sort();
    named.dedup();
    let stored: HashMap<String, String> = if named.is_empty() {
        HashMap::new()
    } else {
        // Share-locked: a completion of a blocker (which takes no team lock) either commits
        // before this reads it, or waits for the new edges and so sees them.
        sqlx::query_as::<_, (String, String)>(
            "select id, status from tasks where team_id = $1 and id = any($2)
             order by id for share",
        )
        .bind(team_id)
        .bind(&named)
        .fetch_all(tx.conn())
        .await?
        .into_iter()
        .collect()
    };
    // Each new task's new blockers, in the order added.
    let mut graph = rules::BlockerGraph::default();
    let mut added: HashSet<(&str, &str)> = HashSet::new();
    let (mut task_ids, mut blocker_ids) = (Vec::new(), Vec::new());
    let mut unmet: HashMap<&str, i64> = HashMap::new();
    for (i, (t, id)) in tasks.iter().zip(ids).enumerate() {
        let field = rules::batch_field(tasks.len(), i, "blockedBy");
        for blocker in &t.blocked_by {
            if blocker == id {
                return Err(rules::self_blocking(id, &field));
            }
            let is_new = new.contains(blocker.as_str());
            let open = if is_new {
                true
            } else {
                match stored.get(blocker) {
                    None => return Err(rules::unknown_blocker(blocker, &field)),
                    Some(status) => status != TaskStatus::Completed.as_str(),
                }
            };
            if is_new {
                graph.check_acyclic(id, blocker)?;
            }
            if added.insert((id.as_str(), blocker.as_str())) {
                task_ids.push(id.clone());
                blocker_ids.push(blocker.clone());
                if is_new {
                    graph.add(id, blocker);
                }
                if open {
                    *unmet.entry(id.as_str()).or_insert(0) += 1;
                }
            }
        }
    }
    sqlx::query(
        "insert into task_deps (team_id, task_id, blocker_id)
         select $1, u.task, u.blocker from unnest($2::text[], $3::text[]) as u(task, blocker)",
    )
    .bind(team_id)
    .bind(task_ids)
    .bind(blocker_ids)
    .execute(tx.conn())
    .await?;
    let (counted, counts): (Vec<String>, Vec<i64>) =
        unmet.into_iter().map(|(id, n)| (id.to_string(), n)).unzip();
    sqlx::query(
        "update tasks as t set unmet_blockers = u.n
         from unnest($2::text[], $3::bigint[]) as u(id, n)
         where t.team_id = $1 and t.id = u.id",
    )
    .bind(team_id)
    .bind(counted)
    .bind(counts)
    .execute(tx.conn())
    .await?;
    Ok(())
}
