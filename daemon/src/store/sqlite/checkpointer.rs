//! Checkpoints off the writer thread.
//!
//! SQLite's automatic checkpoint runs inside the commit that takes the WAL past 1,000 pages:
//! on the writer every team shares, it copies those pages into the database file and syncs it,
//! and every write queued meanwhile waits. The write connection turns it off
//! (`wal_autocheckpoint = 0`) and nudges this thread after each commit; the thread runs a
//! `PASSIVE` checkpoint (which never blocks the writer or a reader) on a connection it opens
//! for that checkpoint, at most every `PACE`.
//!
//! A passive checkpoint copies only what was committed when it started, and the writer starts
//! the WAL over only when everything in it was copied: under writes that never pause, the WAL
//! would keep growing. So when a checkpoint finds more than `WAL_BOUND` frames, it asks the
//! writer to checkpoint once itself, between two batches, as the automatic one did.

use super::super::StoreResult;
use rusqlite::{Connection, OpenFlags};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::Duration;

/// The least time between two checkpoints of this thread: each copies and syncs a batch of
/// pages rather than a few after every commit.
const PACE: Duration = Duration::from_millis(100);

/// WAL frames (pages) past which the writer checkpoints itself: 16,000 pages of 4 KiB, 64 MiB.
const WAL_BOUND: i64 = 16_000;

pub struct Checkpointer {
    nudge: Option<SyncSender<()>>,
    /// Set by the thread when the WAL outgrew `WAL_BOUND`; taken by the writer.
    writer_must_checkpoint: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts the thread for the database at `path`.
    pub fn start(path: PathBuf) -> Checkpointer {
        let (nudge, nudged) = sync_channel(1);
        let writer_must_checkpoint = Arc::new(AtomicBool::new(false));
        let flag = writer_must_checkpoint.clone();
        let thread = std::thread::Builder::new()
            .name("huddle-checkpoint".into())
            .spawn(move || checkpoint_loop(&path, &nudged, &flag))
            .expect("spawn checkpoint thread");
        Checkpointer {
            nudge: Some(nudge),
            writer_must_checkpoint,
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

    /// Whether the writer must checkpoint itself now (the WAL outgrew its bound); clears it.
    pub fn writer_must_checkpoint(&self) -> bool {
        self.writer_must_checkpoint.swap(false, Ordering::Relaxed)
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

fn checkpoint_loop(path: &PathBuf, nudged: &Receiver<()>, writer_must: &AtomicBool) {
    while nudged.recv().is_ok() {
        match checkpoint(path) {
            Ok(frames) if frames > WAL_BOUND => writer_must.store(true, Ordering::Relaxed),
            Ok(_) => {}
            Err(e) => tracing::debug!(error = %e, "background checkpoint"),
        }
        std::thread::sleep(PACE);
    }
}

/// One passive checkpoint on a connection of its own, closed after it (a connection kept open
/// on a filesystem that turned read-only would keep the shared WAL index read-only; the
/// writer's reopen depends on every such connection closing). Answers the WAL's frame count.
fn checkpoint(path: &PathBuf) -> StoreResult<i64> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(Duration::from_millis(100))?;
    let frames = conn.query_row("pragma wal_checkpoint(passive)", [], |r| r.get::<_, i64>(1))?;
    Ok(frames)
}
