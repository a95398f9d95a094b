//! One batch of the writer: the jobs it takes (`BatchFill`), each in its savepoint, one commit,
//! then the effects published and every job answered.
//!
//! An error SQLite answers by rolling the whole transaction back (an I/O error; a full disk in a
//! statement that keeps no statement journal) ends the batch: no later job runs outside the
//! transaction, and every job of the batch fails.

use super::super::super::error::{StoreError, StoreResult};
use super::super::fair_queue::{BatchFill, FairQueue, QueueKey};
use super::{Finisher, Published, Queued, WriteCtx};
use crate::metrics::WriterJob;
use rusqlite::Connection;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// A batch of one team's jobs takes no further job once they have run this long: the writes
/// waiting behind it wait for at most this, one job and the commit.
const BATCH_TIME: Duration = Duration::from_millis(25);

/// The same once the batch holds jobs of two teams (`BatchFill`): a team's write taken into a
/// batch another team was filling is committed after at most this, one job and the commit.
const SHARED_BATCH_TIME: Duration = Duration::from_millis(4);

/// How a batch ended.
pub(super) struct BatchEnd {
    pub(super) committed: bool,
    /// The transaction could not begin because the file is read-only.
    pub(super) failed_read_only: bool,
}

/// Runs the next jobs of `queue` (up to `max_batch`, within `BatchFill`'s time) in one transaction,
/// after renewing the leases an outage left unheartbeated (`renew`, see `outage.rs`).
pub(super) fn run_batch(
    conn: &Connection,
    queue: &mut FairQueue<Queued>,
    arrivals: &mut mpsc::UnboundedReceiver<(QueueKey, Queued)>,
    max_batch: usize,
    published: &Published,
    touched: &mut HashMap<(i64, String), i64>,
    renew: Option<(i64, i64)>,
) -> BatchEnd {
    if let Err(e) = exec_cached(conn, "begin immediate") {
        // Dropping the jobs drops their reply channels: each caller gets `Unavailable`.
        tracing::debug!(error = %e, "cannot begin a write transaction");
        drop_jobs(queue, max_batch);
        return BatchEnd {
            committed: false,
            failed_read_only: is_read_only(&e),
        };
    }
    // The batch's clock starts once it holds the write lock: `begin` may have waited for it
    // (another process's lock, up to the busy timeout), and jobs sent meanwhile join it.
    let now_ms = chrono::Utc::now().timestamp_millis();
    // When `now_ms` was read, to tell the jobs sent later.
    let mut clock_read = Instant::now();
    if let Some((live_at_ms, grace_ms)) = renew {
        match super::super::claims::renew_after_outage(conn, live_at_ms, now_ms + grace_ms) {
            Ok(0) => {}
            Ok(n) => tracing::info!(
                renewed_leases = n,
                "writes resumed; leases live before they stopped were renewed"
            ),
            Err(e) => {
                // The batch's jobs fail as when `begin` does: kept waiting, they would hang their
                // callers while the writer retried the renewal without pause.
                tracing::warn!(error = %e, "renewing leases after writes stopped failed; the batch's writes fail");
                let _ = conn.execute_batch("rollback");
                drop_jobs(queue, max_batch);
                return BatchEnd {
                    committed: false,
                    failed_read_only: false,
                };
            }
        }
    }
    let mut ctx = WriteCtx {
        conn,
        now_ms,
        effects: Vec::new(),
        seqs: HashMap::new(),
        touched,
    };
    let mut finishers = Vec::with_capacity(max_batch);
    let started = Instant::now();
    let mut dropped = 0;
    // Light teams' jobs together, a heavy team's job alone (`FairQueue::next_for_batch`).
    let mut alone = false;
    let mut fill = BatchFill::new(BATCH_TIME, SHARED_BATCH_TIME);
    while !alone
        && finishers.len() + dropped < max_batch
        && (finishers.len() + dropped == 0 || fill.has_room(started.elapsed()))
    {
        // Jobs sent while the batch runs join the queue at once: another team's write is then
        // taken next, and the batch closes soon after (`BatchFill`).
        while let Ok((key, job)) = arrivals.try_recv() {
            queue.push(key, job);
        }
        let Some((key, (sent, job), heavy)) = queue.next_for_batch(finishers.len()) else {
            break;
        };
        alone = heavy;
        fill.took(key);
        if sent > clock_read {
            clock_read = Instant::now();
            ctx.now_ms = ctx.now_ms.max(chrono::Utc::now().timestamp_millis());
        }
        let job_started = Instant::now();
        let waited = job_started - sent;
        let mark = ctx.effects.len();
        let seqs_before = ctx.seqs.clone();
        if let Err(e) = exec_cached(conn, "savepoint job") {
            tracing::error!(error = %e, "cannot open a savepoint; job dropped");
            // Counted, so a stream of arrivals cannot keep a failing batch open.
            dropped += 1;
            continue;
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| job(&mut ctx)));
        let took = job_started.elapsed();
        queue.record(key, took);
        let kind = match (key, heavy) {
            (None, _) => WriterJob::Store,
            (Some(_), true) => WriterJob::Heavy,
            (Some(_), false) => WriterJob::Light,
        };
        crate::metrics::writer_job(kind, waited, took);
        let (ok, finish) = match outcome {
            Ok(pair) => pair,
            Err(panic) => {
                tracing::error!(panic = ?panic_text(&panic), "a write job panicked; rolled back");
                (false, Box::new(|_: StoreResult<()>| {}) as Finisher)
            }
        };
        if ok {
            let _ = exec_cached(conn, "release job");
        } else {
            ctx.effects.truncate(mark);
            ctx.seqs = seqs_before;
            let _ = exec_cached(conn, "rollback to job");
            let _ = exec_cached(conn, "release job");
        }
        finishers.push(finish);
        if conn.is_autocommit() {
            break;
        }
    }
    queue.batch_done(alone);
    // SQLite rolled the transaction back under a failing statement: nothing more may run, and
    // nothing of the batch is kept.
    let mut lost = conn.is_autocommit();
    // Claimers parked for the tasks this batch made ready claim in it, not in a batch of their own
    // (`serve` stops at a rollback too).
    let served = if lost {
        Vec::new()
    } else {
        super::handoff::serve(&mut ctx, &published.hub, || started.elapsed() < BATCH_TIME)
    };
    lost |= conn.is_autocommit();
    if lost {
        tracing::error!("SQLite rolled the batch's transaction back; every job in it fails");
    }
    let commit_started = std::time::Instant::now();
    let committed = if lost {
        Err(StoreError::Unavailable(
            "the write was rolled back; try again".into(),
        ))
    } else {
        ctx.flush_seqs()
            .and_then(|_| exec_cached(conn, "commit").map(drop))
            .map_err(super::super::map_sqlite_error)
    };
    crate::metrics::writer_batch(finishers.len(), commit_started.elapsed());
    if committed.is_err() {
        let _ = conn.execute_batch("rollback");
    }
    // Streams and long polls first, then the callers: a subscriber should not wait for every
    // poster of the batch to be answered before its delivery starts.
    if committed.is_ok() {
        for effect in std::mem::take(&mut ctx.effects) {
            published.apply(effect);
        }
    }
    let ended = BatchEnd {
        committed: committed.is_ok(),
        failed_read_only: false,
    };
    for claim in served {
        claim.answer(committed.is_ok());
    }
    for finish in finishers {
        finish(committed.as_ref().map(|_| ()).map_err(clone_error));
    }
    ended
}

/// Drops the next batch's worth of jobs: dropping a job drops its reply channel, so its caller
/// gets `Unavailable`.
fn drop_jobs(queue: &mut FairQueue<Queued>, max_batch: usize) {
    for _ in 0..max_batch {
        if queue.pop().is_none() {
            break;
        }
    }
}

fn is_read_only(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::ReadOnly)
}

/// The batch's `begin` and `commit` and the savepoints (twice per job): kept prepared.
pub(super) fn exec_cached(conn: &Connection, sql: &str) -> rusqlite::Result<usize> {
    conn.prepare_cached(sql)?.execute([])
}

fn clone_error(e: &StoreError) -> StoreError {
    match e {
        StoreError::Unavailable(m) => StoreError::Unavailable(m.clone()),
        other => StoreError::Internal(other.to_string()),
    }
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "non-string panic".into())
}

#[cfg(test)]
#[path = "batch_tests.rs"]
mod tests;
