//! A small pool of read-only connections. WAL lets them read while the writer commits; each read
//! runs on the blocking thread pool so the async runtime never waits on disk.

use super::super::{StoreError, StoreResult};
use rusqlite::Connection;
use std::path::Path;
use std::sync::Mutex;
use tokio::sync::Semaphore;

pub struct Readers {
    idle: Mutex<Vec<Connection>>,
    permits: Semaphore,
}

impl Readers {
    pub fn open(path: &Path, count: usize) -> StoreResult<Self> {
        let conns = (0..count)
            .map(|_| super::open_reader(path))
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Readers {
            idle: Mutex::new(conns),
            permits: Semaphore::new(count),
        })
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
        let conn = self
            .idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop()
            .ok_or_else(|| StoreError::Internal("read pool empty despite a permit".into()))?;
        let this = self.clone();
        let (conn, result) = tokio::task::spawn_blocking(move || {
            let result = conn
                .execute_batch("begin")
                .map_err(StoreError::from)
                .and_then(|_| {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&conn)))
                        .unwrap_or_else(|_| Err(StoreError::Internal("a read panicked".into())))
                });
            let _ = conn.execute_batch("commit");
            (conn, result)
        })
        .await
        .map_err(|e| StoreError::Internal(format!("read task failed: {e}")))?;
        this.idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(conn);
        result
    }

    /// Refuses further reads and closes the idle connections.
    pub fn close(&self) {
        self.permits.close();
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}
