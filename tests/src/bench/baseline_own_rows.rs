//! huddle's own rows without huddle: the loop of `baseline_sqlite`, committing `per_tx` tasks
//! per transaction, run on a copy of a real daemon's database after `claim::prepare` filled it,
//! with the statements huddle's writer runs for a batched claim and completion (`store/sqlite/
//! claims.rs`, `task_state.rs`, `rows.rs`, `writer.rs`) and nothing else: no HTTP, no JSON
//! parsing beyond the stored metadata, no queue, no savepoints, no rules. So huddle's distance
//! from the bare loop splits in two: what its rows cost (the schema, its indexes, the event
//! log) and what its machinery costs.

use super::baseline_own_copy::{open_as_writer, Edges, TaskRow};
use super::stats::{Figures, Latencies};
use super::Sync;
use huddle_daemon::store::rules::STATE_COLUMNS;
use rusqlite::{params, Connection, OptionalExtension};
use std::path::Path;
use std::time::Instant;

/// What each change writes to the event log.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Events {
    /// The task as huddle stores it: its fields in an array, without their names.
    Task,
    /// The task as an object, as huddle stored it before (and the API shows it).
    Object,
    /// An event row whose data is `{}`: the row without the task it carries.
    Empty,
    /// No event row.
    Omitted,
}

impl Events {
    fn label(self) -> &'static str {
        match self {
            Events::Task => "huddle's rows",
            Events::Object => "huddle's rows, the task in events as an object",
            Events::Empty => "huddle's rows, events without the task",
            Events::Omitted => "huddle's rows without events",
        }
    }
}

/// Where the loop stands: the open transaction's connection, the team, the event sequence.
struct Loop<'c> {
    conn: &'c Connection,
    team_id: i64,
    /// The worker every task is claimed and completed by.
    agent: &'c str,
    events: Events,
    /// The clock saves stamp, one millisecond on per claim (the daemon's moves with time).
    now: i64,
    /// The team's last event sequence, written back once per transaction as the writer does.
    seq: i64,
}

/// Claims `claim_batch` tasks at a time and completes them, `per_tx` tasks per transaction, as
/// agent `agent` of team `team` in the copy at `db`, until no task is ready.
pub fn run(
    sync: Sync,
    per_tx: usize,
    claim_batch: usize,
    events: Events,
    db: &Path,
    (team, agent): (&str, &str),
) -> Result<Figures, String> {
    let conn = open_as_writer(db, sync)?;
    // Checkpoints as seldom as the daemon's writer takes one itself (`checkpointer.rs`'s
    // bound); the daemon's own run on another thread, outside its commits.
    conn.execute_batch("pragma wal_autocheckpoint = 16000")
        .map_err(|e| e.to_string())?;
    let team_id: i64 = conn
        .query_row("select id from teams where name = ?1", [team], |r| r.get(0))
        .map_err(|e| e.to_string())?;
    let (now, seq): (i64, i64) = conn
        .query_row(
            "select (select max(updated_at) from tasks where team_id = ?1), event_seq
             from team_seqs where team_id = ?1",
            [team_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(|e| e.to_string())?;
    let mut l = Loop {
        conn: &conn,
        team_id,
        agent,
        events,
        now,
        seq,
    };
    let mut lat = Latencies::default();
    let started = Instant::now();
    let mut done = 0usize;
    loop {
        let t0 = Instant::now();
        let in_tx = l
            .transaction(per_tx, claim_batch)
            .map_err(|e| e.to_string())?;
        if in_tx == 0 {
            break;
        }
        done += in_tx;
        lat.push(t0.elapsed());
    }
    let name = format!("sqlite raw, {}, {per_tx}/tx", events.label());
    let mut figures = Figures::new(&name, "tasks", done, started.elapsed(), &mut lat)
        .note("latency", "one transaction");
    figures.settings = serde_json::json!({"synchronous": sync.as_str(), "perTransaction": per_tx,
        "claimBatch": claim_batch, "events": format!("{events:?}"), "tasks": done});
    Ok(figures)
}

impl Loop<'_> {
    /// One transaction of up to `per_tx` tasks claimed and completed; how many.
    fn transaction(&mut self, per_tx: usize, claim_batch: usize) -> rusqlite::Result<usize> {
        self.conn.execute_batch("begin immediate")?;
        let mut in_tx = 0;
        while in_tx < per_tx {
            self.now += 1;
            let claimed = self.claim(claim_batch.min(per_tx - in_tx))?;
            if claimed.is_empty() {
                break;
            }
            in_tx += claimed.len();
            self.complete(&claimed)?;
        }
        // Once per batch: the team's sequences and its usage counts (`WriteCtx::flush_seqs`).
        self.conn
            .prepare_cached(
                "update team_seqs set msg_seq = msg_seq, event_seq = ?2 where team_id = ?1",
            )?
            .execute(params![self.team_id, self.seq])?;
        self.conn
            .prepare_cached(
                "update team_usage set tasks_pending = tasks_pending + ?2,
                     tasks_in_progress = tasks_in_progress + 0, tasks_completed = tasks_completed + ?3,
                     tasks_failed = tasks_failed + 0, tasks_cancelled = tasks_cancelled + 0,
                     storage_bytes = storage_bytes + 0
                 where team_id = ?1",
            )?
            .execute(params![self.team_id, -(in_tx as i64), in_tx as i64])?;
        self.conn.execute_batch("commit")?;
        Ok(in_tx)
    }

    /// The claim's search, then per task its save (the row, its edges, its event).
    fn claim(&mut self, max: usize) -> rusqlite::Result<Vec<TaskRow>> {
        let mut ready = self
            .conn
            .prepare_cached(&format!(
                "select {STATE_COLUMNS} from tasks indexed by tasks_ready
                 where team_id = ?1 and status = 'pending' and unmet_blockers = 0
                   and prefix in (?2, ?2) and (owner is null or owner = ?3 or owner = ?4)
                 order by created_at, number limit ?5"
            ))?
            .query_map(
                params![self.team_id, "TEST", self.agent, "tester", (max + 1) as i64],
                TaskRow::of,
            )?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        ready.truncate(max);
        let lease = self.now + 60_000;
        for task in &mut ready {
            task.version += 1;
            task.updated_at = self.now;
            self.save(task, "in_progress", Some(lease))?;
            let edges = self.edges_of(&task.id)?;
            self.append_event("task.claimed", |packed| {
                task.event_json("in_progress", Some(self.agent), Some(lease), &edges, packed)
            })?;
        }
        Ok(ready)
    }

    /// Per task: read it, save it completed, its edges, its event.
    fn complete(&mut self, held: &[TaskRow]) -> rusqlite::Result<()> {
        for h in held {
            let mut task = self
                .conn
                .prepare_cached(&format!(
                    "select {STATE_COLUMNS} from tasks where team_id = ?1 and id = ?2"
                ))?
                .query_row(params![self.team_id, h.id], TaskRow::of)
                .optional()?
                .ok_or(rusqlite::Error::QueryReturnedNoRows)?;
            task.version += 1;
            task.updated_at = self.now;
            self.save(&task, "completed", None)?;
            let edges = self.edges_of(&task.id)?;
            self.append_event("task.completed", |packed| {
                task.event_json("completed", Some(self.agent), None, &edges, packed)
            })?;
        }
        Ok(())
    }

    /// `task_state::save`'s statement.
    fn save(&self, t: &TaskRow, status: &str, lease: Option<i64>) -> rusqlite::Result<()> {
        self.conn
            .prepare_cached(
                "update tasks set subject = ?3, description = ?4, active_form = ?5, status = ?6, owner = ?7,
                        claimed_by = ?8, lease_expires_at = ?9, attempts = ?10, metadata = ?11, result = ?12,
                        failure_reason = ?13, version = ?14, updated_at = ?15
                 where team_id = ?1 and id = ?2",
            )?
            .execute(params![
                self.team_id,
                t.id,
                t.subject,
                t.description,
                None::<String>,
                status,
                None::<String>,
                self.agent,
                lease,
                t.attempts,
                t.metadata,
                None::<String>,
                None::<String>,
                t.version,
                self.now
            ])?;
        Ok(())
    }

    /// `rows::edges_of`'s statement.
    fn edges_of(&self, id: &str) -> rusqlite::Result<Edges> {
        let mut stmt = self.conn.prepare_cached(
            "select blocker_id, 0 from task_deps where team_id = ?1 and task_id = ?2
             union all
             select task_id, 1 from task_deps where team_id = ?1 and blocker_id = ?2",
        )?;
        let mut rows = stmt.query(params![self.team_id, id])?;
        let mut edges = (Vec::new(), Vec::new());
        while let Some(row) = rows.next()? {
            let other: String = row.get(0)?;
            if row.get::<_, i64>(1)? == 0 {
                edges.0.push(other);
            } else {
                edges.1.push(other);
            }
        }
        Ok(edges)
    }

    /// `rows::append_event_json`'s statement, with the data `self.events` asks for.
    fn append_event(
        &mut self,
        kind: &str,
        data: impl FnOnce(bool) -> String,
    ) -> rusqlite::Result<()> {
        let data = match self.events {
            Events::Task => data(true),
            Events::Object => data(false),
            Events::Empty => "{}".to_string(),
            Events::Omitted => return Ok(()),
        };
        self.seq += 1;
        self.conn
            .prepare_cached(
                "insert into events (team_id, seq, type, data, created_at) values (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![self.team_id, self.seq, kind, data, self.now])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::baseline_own_copy::copy_of;
    use super::super::client::{add_agent, create_tasks, setup_team, BenchClient};
    use super::super::Sync;
    use super::{run, Events};
    use huddle_daemon::store::rules::task_event;
    use rusqlite::Connection;
    use serde_json::{json, Value};
    use std::collections::BTreeSet;
    use std::path::Path;

    const TASKS: usize = 120;

    fn count(db: &Path, sql: &str) -> i64 {
        Connection::open(db)
            .unwrap()
            .query_row(sql, [], |r| r.get(0))
            .unwrap()
    }

    fn keys(v: &Value) -> BTreeSet<String> {
        v.as_object().unwrap().keys().cloned().collect()
    }

    /// On a copy of a real daemon's rows, the loop claims and completes every task once and
    /// writes the events asked for and the team's counts; the task it puts in an event has the
    /// fields the daemon's own events have.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_loop_runs_the_daemons_rows_to_the_end_with_the_events_asked_for() {
        let daemon = crate::TestDaemon::start().await;
        let admin = BenchClient::new(&daemon.url, crate::ADMIN);
        let coord = setup_team(&admin, "claim").await;
        let tasks = (1..=TASKS)
            .map(|i| json!({"id": format!("TEST-{i}"), "subject": "bench"}))
            .collect();
        create_tasks(&coord, "claim", tasks).await;
        add_agent(&admin, "claim", "w0", "tester").await;
        let live = daemon.data_dir.join("huddle.db");
        let all = [
            (Events::Task, 2),
            (Events::Object, 2),
            (Events::Empty, 2),
            (Events::Omitted, 0),
        ];
        for (events, per_task) in all {
            let dir = tempfile::tempdir().unwrap();
            let copy = copy_of(&live, dir.path()).unwrap();
            let before = count(&copy, "select count(*) from events");
            let figures = run(Sync::Full, 100, 50, events, &copy, ("claim", "w0")).unwrap();
            assert_eq!(figures.settings["tasks"], json!(TASKS), "{events:?}");
            let completed = "select count(*) from tasks where status = 'completed' and version = 3 and claimed_by = 'w0'";
            assert_eq!(count(&copy, completed), TASKS as i64, "{events:?}");
            let added = count(&copy, "select count(*) from events") - before;
            assert_eq!(added, per_task * TASKS as i64, "{events:?}");
            let team = "(select id from teams where name = 'claim')";
            assert_eq!(
                count(
                    &copy,
                    &format!("select event_seq from team_seqs where team_id = {team}")
                ),
                count(
                    &copy,
                    &format!("select max(seq) from events where team_id = {team}")
                ),
                "{events:?}: the team's sequence follows its events"
            );
            let usage = format!(
                "select tasks_completed * 1000 + tasks_pending from team_usage where team_id = {team}"
            );
            assert_eq!(count(&copy, &usage), TASKS as i64 * 1000, "{events:?}");
            if matches!(events, Events::Task | Events::Object) {
                let conn = Connection::open(&copy).unwrap();
                let data = |kind: &str| -> String {
                    conn.query_row(
                        "select data from events where type = ?1 order by seq desc limit 1",
                        [kind],
                        |r| r.get(0),
                    )
                    .unwrap()
                };
                // The daemon's own event (the task's creation) beside the loop's.
                let (created, done) = (data("task.created"), data("task.completed"));
                assert!(created.starts_with("[1,"), "{created}");
                assert_eq!(done.starts_with("[1,"), events == Events::Task, "{done}");
                let created = task_event::value("task.created", &created);
                let done = task_event::value("task.completed", &done);
                assert_eq!(keys(&done), keys(&created));
                assert_eq!(done["status"], "completed");
                assert_eq!(done["claimedBy"], "w0");
            }
        }
    }
}
