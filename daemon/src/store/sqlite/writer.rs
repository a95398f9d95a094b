//! The single writer: one thread owns the only write connection and commits many operations per
//! transaction (group commit).
//!
//! Requests queue jobs, each team's in its own queue (at most `4 × max_batch` waiting per team,
//! so a team that floods waits on its own queue, not in front of the others). The writer runs
//! what is waiting (up to `max_batch` jobs, taking the teams in turn, and no more once the batch
//! has run `BATCH_TIME`, or `SHARED_BATCH_TIME` once it holds two teams' jobs; jobs sent
//! meanwhile join the queue between its jobs) inside one `BEGIN IMMEDIATE` transaction — each in its
//! own savepoint so a refused operation rolls back alone — commits once, and only then publishes
//! the batch's effects to the hub and answers every job. With `synchronous=FULL` one fsync covers the
//! whole batch, which is what lets durable throughput scale with load.

use super::super::error::{StoreError, StoreResult};
use super::super::rules::{TaskState, TaskUsageDelta};
use super::checkpointer::Checkpointer;
use super::empty_claims::{EmptyClaims, Exhausted};
use super::fair_queue::{Admission, FairQueue, QueueKey};
use super::outage::Outage;
use super::unsent::Unsent;
use crate::hub::{Hub, Publish, ReadyTask};
use rusqlite::{Connection, OptionalExtension};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{mpsc, oneshot};

mod batch;
mod handoff;
use batch::run_batch;
pub use handoff::park;

/// What a job sees: the connection (inside the batch transaction) and where to record effects
/// that must be published after the commit.
pub struct WriteCtx<'c> {
    pub conn: &'c Connection,
    /// Milliseconds since the epoch: read once the batch holds the write lock, and moved
    /// forward (never back) for a job sent after that, so no job's clock is older than its
    /// request (a heartbeat's lease counts from no earlier than its arrival).
    pub now_ms: i64,
    effects: Vec<Effect>,
    /// Per-team message and event sequences for this batch: read once, written back once
    /// before the commit, restored when a job rolls back so sequences never have gaps.
    seqs: HashMap<i64, TeamSeqs>,
    /// When each agent's `last_seen_at` was last written (across batches).
    touched: &'c mut HashMap<(i64, String), i64>,
}

/// What a batch does after it commits, in the order its jobs asked.
enum Effect {
    Publish(i64, Publish),
    /// Task `id` became claimable: a `TaskReady`, unless a parked claim took it in the same
    /// batch (`handoff.rs`).
    Ready {
        team_id: i64,
        id: String,
        task: ReadyTask,
    },
    /// A claim took every task its searches could find.
    Exhausted(i64, Exhausted),
}

/// A team's part of the batch: its sequences, and what its saved tasks changed in its usage.
#[derive(Debug, Clone, Copy)]
struct TeamSeqs {
    msg: i64,
    event: i64,
    /// Counted into `team_usage` once per batch (`flush_seqs`). Saves used to be counted by a
    /// row trigger, whose SQL functions made SQLite keep a statement journal for every task
    /// update: half of the update's cost (migration 0014).
    usage: TaskUsageDelta,
}

impl WriteCtx<'_> {
    pub fn publish(&mut self, team_id: i64, item: Publish) {
        self.effects.push(Effect::Publish(team_id, item));
    }

    /// Task `id` has just become claimable: a claimer parked for it may take it in this batch;
    /// otherwise one is woken after the commit.
    pub fn ready(&mut self, team_id: i64, id: &str, task: ReadyTask) {
        self.effects.push(Effect::Ready {
            team_id,
            id: id.to_string(),
            task,
        });
    }

    /// Records, for after the commit, that a claim left its searches empty.
    pub fn exhausted(&mut self, team_id: i64, proof: Exhausted) {
        self.effects.push(Effect::Exhausted(team_id, proof));
    }

    /// When the agent's last-seen time was last written, if this writer wrote it.
    pub fn touched_at(&self, team_id: i64, agent: &str) -> Option<i64> {
        self.touched.get(&(team_id, agent.to_string())).copied()
    }

    fn seqs(&mut self, team_id: i64) -> StoreResult<&mut TeamSeqs> {
        if !self.seqs.contains_key(&team_id) {
            // No row: the team was deleted after the caller's token was checked.
            let (msg, event) = self
                .conn
                .prepare_cached("select msg_seq, event_seq from team_seqs where team_id = ?1")?
                .query_row([team_id], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?
                .ok_or_else(|| StoreError::not_found("team"))?;
            self.seqs.insert(
                team_id,
                TeamSeqs {
                    msg,
                    event,
                    usage: TaskUsageDelta::default(),
                },
            );
        }
        Ok(self.seqs.get_mut(&team_id).expect("just inserted"))
    }

    pub fn next_event_seq(&mut self, team_id: i64) -> StoreResult<i64> {
        let seqs = self.seqs(team_id)?;
        seqs.event += 1;
        Ok(seqs.event)
    }

    pub fn next_msg_seq(&mut self, team_id: i64) -> StoreResult<i64> {
        let seqs = self.seqs(team_id)?;
        seqs.msg += 1;
        Ok(seqs.msg)
    }

    /// The last message sequence handed out in this team, this batch included.
    pub fn last_msg_seq(&mut self, team_id: i64) -> StoreResult<i64> {
        Ok(self.seqs(team_id)?.msg)
    }

    /// Whether the agent's last-seen time is worth writing (at most once a second).
    pub fn should_touch(&mut self, team_id: i64, agent: &str) -> bool {
        let key = (team_id, agent.to_string());
        match self.touched.get(&key) {
            Some(at) if self.now_ms - at < 1000 => false,
            _ => {
                self.touched.insert(key, self.now_ms);
                true
            }
        }
    }

    /// A saved task's move from the status and size it was loaded with, for the team's usage.
    pub fn count_saved(&mut self, state: &TaskState) -> StoreResult<()> {
        if state.status == state.loaded_status && state.stored_bytes() == state.loaded_bytes {
            return Ok(());
        }
        self.seqs(state.team_id)?.usage.saved(state);
        Ok(())
    }

    /// The team was deleted by this job: later jobs of the batch read its (absent) row again
    /// rather than write under sequences kept from before.
    pub fn forget_team(&mut self, team_id: i64) {
        self.seqs.remove(&team_id);
        self.touched.retain(|(team, _), _| *team != team_id);
    }

    /// Writes the batch's sequences back to `team_seqs`, and its tasks' changes to `team_usage`.
    fn flush_seqs(&mut self) -> rusqlite::Result<()> {
        let mut stmt = self.conn.prepare_cached(
            "update team_seqs set msg_seq = ?2, event_seq = ?3 where team_id = ?1",
        )?;
        let mut usage = self.conn.prepare_cached(
            "update team_usage set tasks_pending = tasks_pending + ?2,
                 tasks_in_progress = tasks_in_progress + ?3, tasks_completed = tasks_completed + ?4,
                 tasks_failed = tasks_failed + ?5, tasks_cancelled = tasks_cancelled + ?6,
                 storage_bytes = storage_bytes + ?7
             where team_id = ?1",
        )?;
        for (team_id, seqs) in &self.seqs {
            stmt.execute(rusqlite::params![team_id, seqs.msg, seqs.event])?;
            let u = seqs.usage;
            if !u.is_zero() {
                let [pending, in_progress, completed, failed, cancelled] = u.statuses;
                usage.execute(rusqlite::params![
                    team_id,
                    pending,
                    in_progress,
                    completed,
                    failed,
                    cancelled,
                    u.bytes
                ])?;
            }
        }
        Ok(())
    }
}

/// Where a committed batch's effects go: the hub (streams, waiting claimers) and the memo of
/// empty claim searches.
pub struct Published {
    pub hub: Arc<Hub>,
    pub empty_claims: Arc<EmptyClaims>,
}

impl Published {
    fn apply(&self, effect: Effect) {
        match effect {
            Effect::Ready { team_id, task, .. } => {
                self.apply(Effect::Publish(team_id, Publish::TaskReady(task)))
            }
            Effect::Publish(team_id, item) => {
                // Unmarked before the wake: a claimer woken for this task must not be told
                // the search is empty.
                match &item {
                    Publish::TaskReady(task) => self.empty_claims.ready(team_id, task),
                    Publish::TasksChanged => self.empty_claims.changed(team_id),
                    Publish::Event(_) | Publish::Message(_) => {}
                }
                self.hub.publish(team_id, [item]);
            }
            Effect::Exhausted(team_id, proof) => self.empty_claims.exhausted(team_id, &proof),
        }
    }
}

/// A job runs against the transaction and hands back a finisher that will be told whether the
/// batch committed.
type Finisher = Box<dyn FnOnce(StoreResult<()>) + Send>;
/// Opens a new write connection (configured, migrations already applied).
pub struct Reopen {
    pub open: Box<dyn Fn() -> StoreResult<Connection> + Send>,
    pub recycle_readers: Box<dyn Fn() + Send>,
}
type Job = Box<dyn FnOnce(&mut WriteCtx<'_>) -> (bool, Finisher) + Send>;
/// A job and when it was sent (for `huddle_writer_wait_seconds`).
type Queued = (Instant, Job);

#[derive(Clone)]
pub struct Writer {
    jobs: mpsc::UnboundedSender<(QueueKey, Queued)>,
    admission: Arc<Admission>,
    unsent: Unsent,
}

impl Writer {
    /// Starts the writer thread; it ends when every `Writer` handle is dropped.
    /// The receiver fires once the connection is closed.
    /// `reopen` makes a fresh write connection; the writer uses it when its connection turned
    /// out read-only (the filesystem was read-only when it opened), so writes resume once the
    /// filesystem is writable again.
    pub fn start(
        conn: Connection,
        reopen: Reopen,
        published: Published,
        checkpointer: Checkpointer,
        max_batch: usize,
        outage_lease_grace_ms: i64,
    ) -> (Writer, oneshot::Receiver<()>) {
        let (tx, rx) = mpsc::unbounded_channel::<(QueueKey, Queued)>();
        let admission = Arc::new(Admission::new(max_batch.max(1) * 4));
        let (done_tx, done_rx) = oneshot::channel();
        std::thread::Builder::new()
            .name("huddle-writer".into())
            .spawn(move || {
                let outage = Outage::new(outage_lease_grace_ms);
                writer_loop(
                    conn,
                    reopen,
                    rx,
                    published,
                    checkpointer,
                    max_batch.max(1),
                    outage,
                );
                let _ = done_tx.send(());
            })
            .expect("spawn writer thread");
        (
            Writer {
                jobs: tx,
                admission,
                unsent: Unsent::default(),
            },
            done_rx,
        )
    }

    /// The time a lease sweep sent now may judge as of (`unsent.rs`).
    pub fn sweep_cutoff_ms(&self) -> i64 {
        self.unsent.cutoff_ms()
    }

    /// Forgets a deleted team's admission slots (a later job of that id makes new ones).
    pub fn forget_team(&self, team_id: i64) {
        self.admission.forget(Some(team_id));
    }

    /// Runs `op`, a write of the whole store (not of one team), in the next batch after every
    /// job sent before it, and answers after that batch has committed.
    pub async fn write<T, F>(&self, op: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteCtx<'_>) -> StoreResult<T> + Send + 'static,
    {
        self.write_keyed(None, op).await
    }

    /// Runs `op`, a write of team `team_id`, in its team's turn, and answers after that batch
    /// has committed.
    pub async fn write_team<T, F>(&self, team_id: i64, op: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteCtx<'_>) -> StoreResult<T> + Send + 'static,
    {
        self.write_keyed(Some(team_id), op).await
    }

    async fn write_keyed<T, F>(&self, key: QueueKey, op: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteCtx<'_>) -> StoreResult<T> + Send + 'static,
    {
        // Registered until sent, so a sweep never overtakes it while it waits for a slot.
        let arrival = key.is_some().then(|| self.unsent.arrive());
        let waiting = self.admission.enter(key).await?;
        let (reply, answer) = oneshot::channel();
        let job: Job = Box::new(move |ctx| {
            drop(waiting);
            let result = op(ctx);
            let ok = result.is_ok();
            let finish: Finisher = Box::new(move |committed| {
                let _ = reply.send(committed.and(result));
            });
            (ok, finish)
        });
        self.jobs
            .send((key, (Instant::now(), job)))
            .map_err(|_| StoreError::Unavailable("the store is closed".into()))?;
        drop(arrival);
        answer
            .await
            .map_err(|_| StoreError::Unavailable("the write was not committed".into()))?
    }
}

fn writer_loop(
    mut conn: Connection,
    reopen: Reopen,
    mut rx: mpsc::UnboundedReceiver<(QueueKey, Queued)>,
    published: Published,
    mut checkpointer: Checkpointer,
    max_batch: usize,
    mut outage: Outage,
) {
    let mut queue: FairQueue<Queued> = FairQueue::default();
    let mut touched = HashMap::new();
    let mut last_reopen: Option<std::time::Instant> = None;
    loop {
        if queue.is_empty() {
            match rx.blocking_recv() {
                Some((key, job)) => queue.push(key, job),
                None => break,
            }
        }
        // Admission bounds what each team has waiting, so this drains a bounded amount.
        while let Ok((key, job)) = rx.try_recv() {
            queue.push(key, job);
        }
        let renew = outage.renewal();
        let end = run_batch(
            &conn,
            &mut queue,
            &mut rx,
            max_batch,
            &published,
            &mut touched,
            renew,
        );
        outage.batch_ended(end.committed);
        if touched.len() > 100_000 {
            touched.clear();
        }
        let read_only = end.failed_read_only
            || conn
                .is_readonly(rusqlite::DatabaseName::Main)
                .unwrap_or(false);
        if !read_only {
            checkpointer.committed();
            if checkpointer.writer_must_checkpoint() {
                // The WAL outgrew its bound under writes that never paused, or background
                // checkpoints keep failing (`checkpointer.rs`).
                let _ = conn.execute_batch("pragma wal_checkpoint(passive)");
            }
        }
        let waited =
            last_reopen.is_none_or(|at| at.elapsed() >= std::time::Duration::from_millis(200));
        if read_only && waited {
            last_reopen = Some(std::time::Instant::now());
            // SQLite keeps one shared-memory index per file for all of a process's
            // connections, read-only while any connection opened on a read-only filesystem
            // is open: close the writer's, recycle the readers', then open afresh.
            let placeholder = Connection::open_in_memory().expect("in-memory connection");
            drop(std::mem::replace(&mut conn, placeholder));
            (reopen.recycle_readers)();
            match (reopen.open)() {
                Ok(fresh) => conn = fresh,
                Err(e) => tracing::warn!(error = %e, "reopening the write connection"),
            }
        }
    }
    // Every sender is gone: checkpoint so the database file is whole on its own.
    drop(checkpointer);
    let _ = conn.execute_batch("pragma wal_checkpoint(truncate)");
    if let Err((_, e)) = conn.close() {
        tracing::warn!(error = %e, "closing the write connection");
    }
}
