//! Checkpoints off the writer thread.
//!
//! SQLite's automatic checkpoint runs inside the commit that takes the WAL past 1,000 pages:
//! on the writer every team shares, it copies those pages into the database file and syncs it,
//! and every write queued meanwhile waits. The write connection turns it off
//! (`wal_autocheckpoint = 0`) and nudges this thread after each commit; the thread runs a
//! `PASSIVE` checkpoint (which never blocks the writer or a reader) on a connection of its own,
//! kept between checkpoints, at most every `PACE`.
//!
//! A passive checkpoint copies only what was committed when it started, and the writer starts
//! the WAL over only when everything in it was copied: under writes that never pause, the WAL
//! would keep growing. So when a checkpoint finds more than `WAL_BOUND` frames, it asks the
//! writer to checkpoint once itself, between two batches, as the automatic one did. The writer
//! also checkpoints itself while this thread's checkpoints keep failing (the WAL must not grow
//! without bound because a background connection cannot open), at most once per
//! `WRITER_PACE` either way.

use super::super::error::StoreResult;
use rusqlite::{Connection, OpenFlags};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The least time between two checkpoints of this thread: each copies and syncs a batch of
/// pages rather than a few after every commit.
const PACE: Duration = Duration::from_millis(100);

/// WAL frames (pages) past which the writer checkpoints itself: 16,000 pages of 4 KiB, about
/// 62.5 MiB (under the 64 MiB `journal_size_limit` that a grown WAL is cut back to).
const WAL_BOUND: i64 = 16_000;

/// Background checkpoints failed in a row past which the writer checkpoints itself.
const FAILURES_BEFORE_WRITER: u32 = 3;

/// The least time between two of the writer's own checkpoints: while a reader's snapshot keeps
/// the WAL from being copied, asking again after every batch would sync the file after every
/// batch, which is what moving checkpoints off the writer saves.
const WRITER_PACE: Duration = Duration::from_secs(1);

pub struct Checkpointer {
    nudge: Option<SyncSender<()>>,
    shared: Arc<Shared>,
    /// When the writer last checkpointed itself (only the writer thread reads or sets it).
    writer_checkpointed: Option<Instant>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What the thread tells the writer.
#[derive(Default)]
struct Shared {
    /// Set when the WAL outgrew `WAL_BOUND`; taken by the writer.
    wal_outgrew: AtomicBool,
    /// Checkpoints that failed since the last one that worked.
    failures: AtomicU32,
}

impl Checkpointer {
    /// Starts the thread for the database at `path`.
    pub fn start(path: PathBuf) -> Checkpointer {
        let (nudge, nudged) = sync_channel(1);
        let shared = Arc::new(Shared::default());
        let theirs = shared.clone();
        let thread = std::thread::Builder::new()
            .name("huddle-checkpoint".into())
            .spawn(move || checkpoint_loop(&path, &nudged, &theirs))
            .expect("spawn checkpoint thread");
        Checkpointer {
            nudge: Some(nudge),
            shared,
            writer_checkpointed: None,
            thread: Some(thread),
        }
    }

    /// Tells the thread a batch committed (never waits: one nudge pending is enough).
    pub fn committed(&self) {
        if let Some(nudge) = &self.nudge {
            match nudge.try_send(()) {
                Ok(()) | Err(TrySendError::Full(())) | Err(TrySendError::Disconnected(())) => {}
            }
        }
    }

    /// Whether the writer must checkpoint itself now: the WAL outgrew its bound, or this
    /// thread's checkpoints keep failing; at most once per `WRITER_PACE`.
    pub fn writer_must_checkpoint(&mut self) -> bool {
        let outgrew = self.shared.wal_outgrew.load(Ordering::Relaxed);
        let failing = self.shared.failures.load(Ordering::Relaxed) >= FAILURES_BEFORE_WRITER;
        let paced = self
            .writer_checkpointed
            .is_none_or(|at| at.elapsed() >= WRITER_PACE);
        if !(outgrew || failing) || !paced {
            return false;
        }
        self.shared.wal_outgrew.store(false, Ordering::Relaxed);
        self.writer_checkpointed = Some(Instant::now());
        true
    }
}

impl Drop for Checkpointer {
    /// Ends the thread and waits for it, so the writer's last checkpoint runs alone.
    fn drop(&mut self) {
        self.nudge.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn checkpoint_loop(path: &PathBuf, nudged: &Receiver<()>, shared: &Shared) {
    // Kept between checkpoints: opening one reads and parses the whole schema, which cost
    // more than the checkpoint itself at ten a second.
    let mut kept: Option<Connection> = None;
    while nudged.recv().is_ok() {
        let outcome = checkpoint(path, &mut kept);
        if outcome.is_err() {
            kept = None; // opened again, and checked again, for the next one
        }
        match outcome {
            Ok(Some(frames)) => {
                shared.failures.store(0, Ordering::Relaxed);
                if frames > WAL_BOUND {
                    shared.wal_outgrew.store(true, Ordering::Relaxed);
                }
            }
            Ok(None) => {}
            Err(e) => {
                // Loud once per run of failures, quiet for the rest of it.
                if shared.failures.fetch_add(1, Ordering::Relaxed) == 0 {
                    tracing::warn!(error = %e, "background checkpoint failed; the writer checkpoints itself while this lasts");
                } else {
                    tracing::debug!(error = %e, "background checkpoint");
                }
            }
        }
        std::thread::sleep(PACE);
    }
}

/// One passive checkpoint on a connection of its own (`kept`, opened when there is none).
/// Answers the WAL's frame count, or `None` when the file can only be read: then the connection
/// is closed at once, since one opened on a read-only filesystem keeps the shared WAL index
/// read-only and the writer's reopen depends on every such connection closing (and touching the
/// index from it is what that reopen must not meet). A connection opened while the file was
/// writable fails its checkpoint once the filesystem turns read-only, and is dropped then.
fn checkpoint(path: &PathBuf, kept: &mut Option<Connection>) -> StoreResult<Option<i64>> {
    let conn = match kept.take() {
        Some(conn) => conn,
        None => {
            let conn = Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_WRITE
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX
                    | OpenFlags::SQLITE_OPEN_URI,
            )?;
            if conn.is_readonly(rusqlite::DatabaseName::Main)? {
                return Ok(None);
            }
            conn.busy_timeout(Duration::from_millis(100))?;
            conn
        }
    };
    let frames = conn.query_row("pragma wal_checkpoint(passive)", [], |r| r.get::<_, i64>(1))?;
    *kept = Some(conn);
    Ok(Some(frames))
}

#[cfg(test)]
mod tests {
    use super::{Checkpointer, WRITER_PACE};
    use std::time::{Duration, Instant};

    /// Background checkpoints that cannot even open the file hand the job to the writer, paced.
    #[test]
    fn the_writer_takes_over_while_background_checkpoints_fail() {
        let dir = tempfile::tempdir().unwrap();
        // No such file (and no flag to create it): every open fails.
        let mut checkpointer = Checkpointer::start(dir.path().join("missing").join("huddle.db"));
        assert!(!checkpointer.writer_must_checkpoint(), "nothing failed yet");
        let deadline = Instant::now() + Duration::from_secs(30);
        let taken_over = loop {
            checkpointer.committed();
            let before = Instant::now();
            if checkpointer.writer_must_checkpoint() {
                break before;
            }
            assert!(
                Instant::now() < deadline,
                "the writer was never asked to checkpoint"
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        // Asked again at once: paced, so no while `WRITER_PACE` has not passed since.
        checkpointer.committed();
        let again = checkpointer.writer_must_checkpoint();
        if taken_over.elapsed() < WRITER_PACE {
            assert!(!again, "the writer's own checkpoints are paced");
        }
    }
}
