//! Group commit per team: the writes of one team that arrive together run in one transaction.
//!
//! Each write paid a commit and an fsync of its own. Here a replica queues its writes per team;
//! a runner takes up to `max_batch` of them, runs them one after another in a single
//! transaction, commits once and only then answers each. A team has up to `batches_per_team`
//! runners at once: a write that arrives while every runner of its team is busy starts another,
//! so one batch's statements overlap another's commit. Claims and completions lock only their
//! task rows and events are numbered in a transaction's last statement (`tx.rs`), so a team's
//! batches run side by side until that statement; writes that take the team's lock still
//! queue for it in the database.
//!
//! A batch has no savepoints (each would be a round trip, and more than 64 written
//! subtransactions slow every snapshot on the server). Instead, when a write of a batch is
//! refused or fails, the batch is rolled back, that write runs again alone in its own
//! transaction (exactly as it would have unbatched) and the others again as a batch: one
//! refused write never makes another fail, and every answer comes from a transaction that
//! committed or from the write's own refusal. Writes are therefore closures that can run more
//! than once. A write that loses a deadlock runs again, and so does a batch whose commit
//! statement loses one (up to three times each; then the answer is 503).
//!
//! Bounds: a queue holds one entry per write whose request is waiting for it, so the daemon's
//! connection cap bounds it; a team's entry is removed when its last runner finds its queue
//! empty; runners per team are capped by `batches_per_team` (and connections by the pool). A write
//! whose requester has gone is dropped before it runs.

use super::super::error::{StoreError, StoreResult};
use super::db::Pool;
use super::tx::Tx;
use super::DEADLOCK_TEXT;
use futures::future::BoxFuture;
use futures::FutureExt;
use std::collections::{HashMap, VecDeque};
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::oneshot;

/// One queued write: runs in a transaction (maybe twice), then is told how its batch ended.
trait Job: Send {
    /// Whether anyone is still waiting for the answer.
    fn wanted(&self) -> bool;
    /// Runs the write; `false` when it was refused or failed (the answer keeps why).
    fn run<'t>(&'t mut self, tx: &'t mut Tx) -> BoxFuture<'t, bool>;
    /// Answers: the write's own result if the transaction committed, else the commit's error.
    fn finish(self: Box<Self>, committed: StoreResult<()>);
    /// Whether the last run failed by losing a deadlock.
    fn lost_deadlock(&self) -> bool;
}

struct Write<T, F> {
    write: F,
    answer: Option<StoreResult<T>>,
    reply: oneshot::Sender<StoreResult<T>>,
}

impl<T, F> Job for Write<T, F>
where
    T: Send + 'static,
    F: for<'t> Fn(&'t mut Tx) -> BoxFuture<'t, StoreResult<T>> + Send + 'static,
{
    fn wanted(&self) -> bool {
        !self.reply.is_closed()
    }

    fn run<'t>(&'t mut self, tx: &'t mut Tx) -> BoxFuture<'t, bool> {
        Box::pin(async move {
            let result = AssertUnwindSafe((self.write)(tx)).catch_unwind().await;
            let answer = result.unwrap_or_else(|_| {
                tracing::error!("a PostgreSQL write panicked; its batch is rolled back");
                Err(StoreError::Internal("the write panicked".into()))
            });
            let ok = answer.is_ok();
            self.answer = Some(answer);
            ok
        })
    }

    fn lost_deadlock(&self) -> bool {
        self.answer.as_ref().is_some_and(lost_deadlock)
    }

    fn finish(self: Box<Self>, committed: StoreResult<()>) {
        let answer = match (self.answer, committed) {
            (Some(Err(refused)), _) => Err(refused),
            (Some(Ok(value)), Ok(())) => Ok(value),
            (_, Err(e)) => Err(e),
            (None, Ok(())) => Err(StoreError::Internal("a queued write never ran".into())),
        };
        let _ = self.reply.send(answer);
    }
}

/// Runs of a write alone after it lost a deadlock, and of a batch whose commit lost one.
const DEADLOCK_RETRIES: usize = 3;

/// Whether `result` is a deadlock PostgreSQL broke by rolling this transaction back.
fn lost_deadlock<T>(result: &StoreResult<T>) -> bool {
    matches!(result, Err(StoreError::Unavailable(m)) if m.starts_with(DEADLOCK_TEXT))
}

/// A team's waiting writes and how many runners are taking them.
#[derive(Default)]
struct TeamQueue {
    jobs: VecDeque<Box<dyn Job>>,
    runners: usize,
}

type Queues = HashMap<i64, TeamQueue>;

pub struct Batcher {
    pool: Pool,
    max_batch: usize,
    batches_per_team: usize,
    queues: Mutex<Queues>,
}

impl Batcher {
    pub fn new(pool: Pool, max_batch: usize, batches_per_team: usize) -> Arc<Batcher> {
        Arc::new(Batcher {
            pool,
            max_batch: max_batch.max(1),
            batches_per_team: batches_per_team.max(1),
            queues: Mutex::new(HashMap::new()),
        })
    }

    /// Runs `write` in a transaction of `team_id`'s next batch and returns its answer once that
    /// transaction has committed. `write` may run twice (see the module docs).
    pub async fn write<T, F>(self: &Arc<Self>, team_id: i64, write: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: for<'t> Fn(&'t mut Tx) -> BoxFuture<'t, StoreResult<T>> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job = Box::new(Write {
            write,
            answer: None,
            reply,
        });
        let start_runner = {
            let mut queues = self.queues.lock().expect("batcher queues");
            // A team has an entry exactly while it has runners. A runner takes every waiting
            // write (up to `max_batch`) at once, so a write that finds the queue with runners is
            // waiting for one of them to finish its batch: it starts another while the team
            // has fewer than `batches_per_team`.
            let queue = queues.entry(team_id).or_default();
            queue.jobs.push_back(job);
            let start = queue.runners < self.batches_per_team;
            queue.runners += usize::from(start);
            start
        };
        if start_runner {
            let batcher = Arc::clone(self);
            tokio::spawn(async move { batcher.drain(team_id).await });
        }
        answer
            .await
            .unwrap_or_else(|_| Err(StoreError::Internal("the write was dropped".into())))
    }

    /// Runs `team_id`'s batches until its queue is empty, then leaves; the last runner to leave
    /// removes the queue (under the same lock a new write checks, so no write is left without
    /// a runner).
    async fn drain(self: Arc<Self>, team_id: i64) {
        // Should this task end any other way (a panic outside a write), it leaves as well; the
        // last runner's leaving takes the queue: its writers are answered with an error and
        // the next write starts a new runner.
        let mut guard = RunnerGuard {
            batcher: &self,
            team_id,
            done: false,
        };
        loop {
            let batch: Vec<Box<dyn Job>> = {
                let mut queues = self.queues.lock().expect("batcher queues");
                let Some(queue) = queues.get_mut(&team_id) else {
                    guard.done = true;
                    return;
                };
                let n = queue.jobs.len().min(self.max_batch);
                let batch: Vec<_> = queue.jobs.drain(..n).collect();
                if batch.is_empty() {
                    leave(&mut queues, team_id);
                    guard.done = true;
                    return;
                }
                batch
            };
            self.run_batch(batch).await;
        }
    }

    /// Runs the jobs in one transaction. When one is refused or fails, the transaction is
    /// rolled back, that job runs alone (its answer is its own), and the others run again as
    /// a new batch: one bad write costs its batch one extra transaction, not one per write.
    async fn run_batch(&self, batch: Vec<Box<dyn Job>>) {
        let mut jobs: Vec<Box<dyn Job>> = batch.into_iter().filter(|j| j.wanted()).collect();
        let mut commit_retries = DEADLOCK_RETRIES;
        while jobs.len() > 1 {
            let mut tx = match Tx::begin(&self.pool).await {
                Ok(tx) => tx,
                Err(e) => {
                    for job in jobs {
                        job.finish(Err(e.clone()));
                    }
                    return;
                }
            };
            let mut failed = None;
            for (i, job) in jobs.iter_mut().enumerate() {
                if !job.run(&mut tx).await {
                    failed = Some(i);
                    break;
                }
            }
            let Some(i) = failed else {
                let started = Instant::now();
                let committed = tx.commit().await;
                crate::metrics::writer_batch(jobs.len(), started.elapsed());
                // The commit's statement lost a deadlock: nothing of the batch was written,
                // and every write of it can run again.
                if lost_deadlock(&committed) && commit_retries > 0 {
                    commit_retries -= 1;
                    continue;
                }
                for job in jobs {
                    job.finish(committed.clone());
                }
                return;
            };
            drop(tx);
            self.run_alone(jobs.remove(i)).await;
        }
        if let Some(job) = jobs.pop() {
            self.run_alone(job).await;
        }
    }

    async fn run_alone(&self, mut job: Box<dyn Job>) {
        // A write that lost a deadlock to a claim or completion (which take no team lock),
        // in one of its statements or in the commit's, runs again, a few times, before its
        // answer is that error.
        let mut retries = DEADLOCK_RETRIES;
        loop {
            let mut tx = match Tx::begin(&self.pool).await {
                Ok(tx) => tx,
                Err(e) => return job.finish(Err(e)),
            };
            if !job.run(&mut tx).await {
                drop(tx);
                if job.lost_deadlock() && retries > 0 {
                    retries -= 1;
                    continue;
                }
                return job.finish(Ok(()));
            }
            let started = Instant::now();
            let committed = tx.commit().await;
            crate::metrics::writer_batch(1, started.elapsed());
            if lost_deadlock(&committed) && retries > 0 {
                retries -= 1;
                continue;
            }
            return job.finish(committed);
        }
    }
}

/// A runner of `team_id` leaves; the last one removes the team's queue (with any writes still
/// in it, whose requesters are then answered with an error).
fn leave(queues: &mut Queues, team_id: i64) {
    if let Some(queue) = queues.get_mut(&team_id) {
        queue.runners = queue.runners.saturating_sub(1);
        if queue.runners == 0 {
            queues.remove(&team_id);
        }
    }
}

/// Makes a runner that ends without emptying its queue leave (see [`Batcher::drain`]).
struct RunnerGuard<'b> {
    batcher: &'b Batcher,
    team_id: i64,
    done: bool,
}

impl Drop for RunnerGuard<'_> {
    fn drop(&mut self) {
        if !self.done {
            if let Ok(mut queues) = self.batcher.queues.lock() {
                leave(&mut queues, self.team_id);
            }
        }
    }
}
