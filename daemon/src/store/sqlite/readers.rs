//! A small pool of read-only connections. WAL lets them read while the writer commits; each read
//! runs on the blocking thread pool so the async runtime never waits on disk.
//!
//! Connections carry a generation. [`Readers::recycle`] bumps it and closes the idle ones;
//! connections out on a read are closed when they come back, and fresh ones open on demand.
//! The writer recycles the pool when it recovers from a read-only filesystem, because SQLite
//! shares one shared-memory index per file across a process's connections and keeps it
//! read-only while any of them is open.

use super::super::{StoreError, StoreResult};
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use tokio::sync::Semaphore;

pub struct Readers {
    path: PathBuf,
    idle: Mutex<Vec<(u64, Connection)>>,
    generation: AtomicU64,
    permits: Semaphore,
}

impl Readers {
    pub fn open(path: &Path, count: usize) -> StoreResult<Self> {
        let conns = (0..count)
            .map(|_| super::open_reader(path).map(|c| (0, c)))
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Readers {
            path: path.to_path_buf(),
            idle: Mutex::new(conns),
            generation: AtomicU64::new(0),
            permits: Semaphore::new(count),
        })
    }

    /// An idle connection of the current generation, or a fresh one.
    fn take(&self) -> StoreResult<(u64, Connection)> {
        let current = self.generation.load(Ordering::SeqCst);
        let found = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        match found {
            Some((generation, conn)) if generation == current => Ok((generation, conn)),
            _ => Ok((current, super::open_reader(&self.path)?)),
        }
    }

    /// Runs `f` on an idle connection inside one read transaction (a consistent snapshot).
    pub async fn read<T, F>(self: &std::sync::Arc<Self>, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| StoreError::Unavailable("the store is closed".into()))?;
        let this = self.clone();
        let (generation, conn, result) = tokio::task::spawn_blocking(move || {
            let (generation, conn) = this.take()?;
            let result = conn
                .execute_batch("begin")
                .map_err(StoreError::from)
                .and_then(|_| {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&conn)))
                        .unwrap_or_else(|_| Err(StoreError::Internal("a read panicked".into())))
                });
            let _ = conn.execute_batch("commit");
            Ok::<_, StoreError>((generation, conn, result))
        })
        .await
        .map_err(|e| StoreError::Internal(format!("read task failed: {e}")))??;
        if generation == self.generation.load(Ordering::SeqCst) {
            self.idle
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((generation, conn));
        }
        result
    }

    /// Closes every connection as soon as it is idle; later reads open fresh ones.
    pub fn recycle(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// Refuses further reads and closes the idle connections.
    pub fn close(&self) {
        self.permits.close();
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}
