//! Creating, editing and listing tasks.

use super::super::error::{StoreError, StoreResult};
use super::super::rules::{self, project, quota, TaskState, STATE_COLUMNS};
use super::super::types::{Caller, Page, TaskFilter};
use super::deps;
use super::rows::{append_task_event, edges_of, load_state, load_task, state_from_row};
use super::task_state::save;
use super::usage;
use super::writer::WriteCtx;
use crate::config::LimitSettings as Limits;
use crate::hub::ReadyTask;
use huddle_wire::{NewTask, Task, TaskPatch};
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::{HashMap, HashSet};

/// Creates every task or none: ids are assigned and checked first, then edges are added (so a
/// batch may refer to its own explicit ids), then events are recorded.
///
/// A batch holds the writer while it runs (every other team's write waits behind it), so it
/// runs few statements per task: each prefix's counter is read once and written back once, and
/// a batch without edges builds its tasks from what it inserted rather than reading them back
/// (a new task is in no edge yet; the tests in `tests/tests/task_create_batch.rs` hold the
/// answer, the events and a later read to the same JSON).
pub fn create(
    ctx: &mut WriteCtx<'_>,
    caller: &Caller,
    tasks: Vec<NewTask>,
    default_max_attempts: i64,
    limits: &Limits,
) -> StoreResult<Vec<Task>> {
    rules::check_task_batch(tasks.len(), limits)?;
    let team_id = caller.team_id;
    usage::budget(ctx.conn, team_id, limits)?.check(&quota::new_tasks_usage(&tasks))?;
    let mut states = Vec::with_capacity(tasks.len());
    let mut seen = HashSet::new();
    let mut counters = Counters::default();
    let mut bytes = 0;
    for (i, t) in tasks.iter().enumerate() {
        let at = |field: &str| rules::batch_field(tasks.len(), i, field);
        rules::validate_new_task(t, &at, limits)?;
        let (prefix, number) = counters.assign_id(ctx.conn, team_id, t, &at)?;
        let id = format!("{prefix}-{number:03}");
        let id = t.id.clone().unwrap_or(id);
        if !seen.insert((prefix.clone(), number)) {
            return Err(rules::duplicate_task(&id));
        }
        let state = TaskState::created(team_id, id, t, default_max_attempts, ctx.now_ms);
        bytes += stored_bytes(&state);
        // A number (or id) already taken fails the insert on `tasks_order` (or the key): no
        // separate lookup per task.
        ctx.conn
            .prepare_cached(
                "insert into tasks (team_id, id, prefix, number, subject, description, active_form, status, owner,
                                    max_attempts, metadata, created_at, updated_at)
                 values (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending', ?8, ?9, ?10, ?11, ?11)",
            )?
            .execute(params![
                team_id,
                state.id,
                prefix,
                number,
                state.subject,
                state.description,
                state.active_form,
                state.owner,
                state.max_attempts,
                state.metadata,
                state.created_at
            ])
            .map_err(|e| taken_or(e, &state.id))?;
        counters.used(&prefix, number);
        states.push((prefix, state));
    }
    counters.save(ctx.conn, team_id)?;
    usage::count_new_tasks(ctx.conn, team_id, states.len() as i64, bytes)?;
    for (i, (t, (_, state))) in tasks.iter().zip(&states).enumerate() {
        let field = rules::batch_field(tasks.len(), i, "blockedBy");
        deps::add_blockers(
            ctx.conn,
            team_id,
            &state.id,
            &t.blocked_by,
            &field,
            limits.max_dependency_walk,
        )?;
    }
    // Without edges in the batch, each new task blocks nothing, waits for nothing and is ready.
    let edges = tasks.iter().any(|t| !t.blocked_by.is_empty());
    let mut created = Vec::with_capacity(states.len());
    for (prefix, state) in states {
        let (task, ready) = if edges {
            let task = load_task(ctx.conn, team_id, &state.id)?;
            let ready = deps::ready_task(ctx.conn, team_id, &task.id)?;
            (task, ready)
        } else {
            let task = state.into_task((Vec::new(), Vec::new()));
            let ready = ReadyTask {
                prefix,
                owner: task.owner.clone(),
                project: project::of_metadata(&task.metadata),
            };
            (task, Some(ready))
        };
        append_task_event(ctx, team_id, "task.created", &task)?;
        if let Some(ready) = ready {
            ctx.ready(team_id, &task.id, ready);
        }
        created.push(task);
    }
    Ok(created)
}

/// The next free number of each prefix a batch touches: read from `task_counters` the first
/// time, kept here while the batch assigns ids, written back once.
#[derive(Default)]
struct Counters {
    next: HashMap<String, i64>,
}

impl Counters {
    /// The prefix and number of a new task: from its explicit id, or the next free number.
    fn assign_id(
        &mut self,
        conn: &Connection,
        team_id: i64,
        t: &NewTask,
        at: &dyn Fn(&str) -> String,
    ) -> StoreResult<(String, i64)> {
        let (prefix, explicit) = match rules::id_request(t, at)? {
            rules::IdRequest::Explicit(p, n) => (p, Some(n)),
            rules::IdRequest::Next(p) => (p, None),
        };
        let next = match self.next.get(&prefix) {
            Some(next) => *next,
            None => {
                let stored: Option<i64> = conn
                    .prepare_cached(
                        "select next_number from task_counters where team_id = ?1 and prefix = ?2",
                    )?
                    .query_row(params![team_id, prefix], |r| r.get(0))
                    .optional()?;
                let next = stored.unwrap_or(1);
                self.next.insert(prefix.clone(), next);
                next
            }
        };
        Ok((prefix, explicit.unwrap_or(next)))
    }

    /// `number` of `prefix` is taken: the next free one is past it.
    fn used(&mut self, prefix: &str, number: i64) {
        if let Some(next) = self.next.get_mut(prefix) {
            *next = (*next).max(number + 1);
        }
    }

    fn save(&self, conn: &Connection, team_id: i64) -> StoreResult<()> {
        let mut upsert = conn.prepare_cached(
            "insert into task_counters (team_id, prefix, next_number) values (?1, ?2, ?3)
             on conflict (team_id, prefix) do update set next_number = max(next_number, excluded.next_number)",
        )?;
        for (prefix, next) in &self.next {
            upsert.execute(params![team_id, prefix, next])?;
        }
        Ok(())
    }
}

/// `TEST-1` and `TEST-001` name the same task, so uniqueness is on prefix and number
/// (`tasks_order`): an insert refused by it, or by the key, names a task that exists. Any
/// other constraint (the team's foreign key, when the team was deleted meanwhile) is not a
/// duplicate and must not read as one.
fn taken_or(e: rusqlite::Error, id: &str) -> StoreError {
    match &e {
        rusqlite::Error::SqliteFailure(f, _) if is_uniqueness(f.extended_code) => {
            rules::duplicate_task(id)
        }
        _ => e.into(),
    }
}

fn is_uniqueness(extended_code: std::os::raw::c_int) -> bool {
    extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
        || extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
}

/// What a new task adds to the team's `storage_bytes` (as migration 0006 counts a task's text).
fn stored_bytes(state: &TaskState) -> i64 {
    (state.subject.len()
        + state.description.len()
        + state.active_form.as_ref().map_or(0, String::len)
        + state.metadata.len()) as i64
}

/// Applies a patch; `if_match` must equal the current version when given.
pub fn update(
    ctx: &mut WriteCtx<'_>,
    caller: &Caller,
    id: &str,
    patch: TaskPatch,
    if_match: Option<i64>,
    limits: &Limits,
) -> StoreResult<Task> {
    let team_id = caller.team_id;
    let mut task = load_state(ctx.conn, team_id, id)?;
    rules::check_version(if_match, task.version)?;
    let mut patch = patch;
    rules::apply_patch_fields(&mut task, &mut patch, limits)?;
    for blocker in &patch.remove_blocked_by {
        deps::remove_blocker(ctx.conn, team_id, id, blocker)?;
    }
    if !patch.add_blocked_by.is_empty() {
        let add = quota::edges_usage(patch.add_blocked_by.len());
        usage::budget(ctx.conn, team_id, limits)?.check(&add)?;
    }
    deps::add_blockers(
        ctx.conn,
        team_id,
        id,
        &patch.add_blocked_by,
        "addBlockedBy",
        limits.max_dependency_walk,
    )?;
    if !patch.add_blocked_by.is_empty() {
        let count: i64 = ctx
            .conn
            .prepare_cached("select count(*) from task_deps where team_id = ?1 and task_id = ?2")?
            .query_row(params![team_id, id], |r| r.get(0))?;
        rules::check_blocker_count(count as usize, limits)?;
    }
    // After the edges, so a patch that drops a blocker and completes the task is judged on the
    // edges it leaves.
    if let Some(status) = patch.status {
        let waiting = if task.needs_waiting(status, patch.force) {
            open_blockers(ctx, team_id, id)?
        } else {
            Vec::new()
        };
        task.set_status(status, patch.force, &waiting)?;
    }
    // Saving wakes a claimer if the task is left ready, whatever the patch changed.
    save(ctx, task, "task.updated")
}

/// The blockers of `id` not completed yet, in id order.
fn open_blockers(ctx: &mut WriteCtx<'_>, team_id: i64, id: &str) -> StoreResult<Vec<String>> {
    Ok(ctx
        .conn
        .prepare_cached(
            "select d.blocker_id from task_deps d
             join tasks b on b.team_id = d.team_id and b.id = d.blocker_id
             where d.team_id = ?1 and d.task_id = ?2 and b.status != 'completed'
             order by d.blocker_id",
        )?
        .query_map(params![team_id, id], |r| r.get(0))?
        .collect::<Result<_, _>>()?)
}

/// Lists tasks in id order (`TEST-2` before `TEST-10`), one page at a time.
pub fn list(conn: &Connection, team_id: i64, filter: &TaskFilter) -> StoreResult<Page<Task>> {
    let query = rules::task_query(filter)?;
    let mut stmt = conn.prepare_cached(&format!(
        "select {STATE_COLUMNS} from tasks
         where team_id = ?1
           and (?2 is null or status = ?2)
           and (?3 is null or owner = ?3)
           and (?4 is null or prefix = ?4)
           and (?5 = 0 or (status = 'pending' and unmet_blockers = 0))
           and (?6 is null or (prefix, number) > (?6, ?7))
           and (?9 is null or claimed_by = ?9)
         order by prefix, number
         limit ?8"
    ))?;
    let rows = stmt.query_map(
        params![
            team_id,
            filter.status.map(|s| s.as_str()),
            filter.owner,
            query.prefix,
            filter.ready as i64,
            query.after_prefix,
            query.after_number,
            query.fetch,
            filter.claimed_by
        ],
        |r| state_from_row(team_id, r),
    )?;
    let (items, next) = rules::take_task_page(rows, filter.limit, filter.max_bytes)?;
    let items = items
        .into_iter()
        .map(|state| {
            let edges = edges_of(conn, team_id, &state.id)?;
            Ok(state.into_task(edges))
        })
        .collect::<StoreResult<_>>()?;
    Ok(Page { items, next })
}

#[cfg(test)]
mod tests {
    use super::taken_or;
    use crate::store::error::StoreError;
    use rusqlite::Connection;

    /// A violated key or unique index reads as the 409 duplicate; a violated foreign key does not.
    #[test]
    fn only_uniqueness_reads_as_a_taken_id() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "pragma foreign_keys = on;
             create table teams (id integer primary key);
             create table tasks (team_id integer not null references teams(id), id text not null,
                                 number integer not null, primary key (team_id, id));
             create unique index tasks_order on tasks (team_id, number);
             insert into teams values (1);
             insert into tasks values (1, 'T-001', 1);",
        )
        .unwrap();
        let insert = |team: i64, id: &str, number: i64| {
            let e = conn
                .execute("insert into tasks values (?1, ?2, ?3)", (team, id, number))
                .unwrap_err();
            taken_or(e, id)
        };
        let duplicate = |e: &StoreError| matches!(e, StoreError::Conflict { .. });
        assert!(duplicate(&insert(1, "T-001", 2)), "the key");
        assert!(duplicate(&insert(1, "T-1", 1)), "tasks_order");
        let missing_team = insert(2, "T-002", 2);
        assert!(!duplicate(&missing_team), "{missing_team:?}");
    }
}
