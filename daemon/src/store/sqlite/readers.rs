//! A small pool of read-only connections. WAL lets them read while the writer commits; each read
//! runs on the blocking thread pool so the async runtime never waits on disk.
//!
//! Connections carry a generation. [`Readers::recycle`] bumps it and closes the idle ones;
//! connections out on a read are closed when they come back, and fresh ones open on demand.
//! The writer recycles the pool when it recovers from a read-only filesystem, because SQLite
//! shares one shared-memory index per file across a process's connections and keeps it
//! read-only while any of them is open.
//!
//! A team's reads hold at most `[limits] max_reads_per_team` connections at once
//! (`store/read_shares.rs`).

use super::super::error::{StoreError, StoreResult};
use super::super::read_shares::ReadShares;
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::Semaphore;

pub struct Readers {
    path: PathBuf,
    idle: Mutex<Vec<(u64, Connection)>>,
    generation: AtomicU64,
    permits: Semaphore,
    shares: ReadShares,
}

impl Readers {
    pub fn open(path: &Path, count: usize, per_team: usize) -> StoreResult<Self> {
        let conns = (0..count)
            .map(|_| super::open_reader(path).map(|c| (0, c)))
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Readers {
            path: path.to_path_buf(),
            idle: Mutex::new(conns),
            generation: AtomicU64::new(0),
            permits: Semaphore::new(count),
            shares: ReadShares::new(per_team.clamp(1, count.max(1)), None),
        })
    }

    /// Like [`Readers::read`], within `team_id`'s share of the connections.
    pub async fn read_team<T, F>(self: &Arc<Self>, team_id: i64, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        let _share = self.shares.enter(team_id).await?;
        self.read(f).await
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
    pub async fn read<T, F>(self: &Arc<Self>, f: F) -> StoreResult<T>
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

#[cfg(test)]
mod tests {
    use super::Readers;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{mpsc, Arc};
    use std::time::Duration;

    /// Two connections, one per team: while team 1 holds its one, its next read waits and
    /// team 2 still reads at once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_team_busy_on_its_share_leaves_the_other_connections_to_other_teams() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("readers.db");
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch("create table t (x); insert into t values (1);")
            .unwrap();
        let readers = Arc::new(Readers::open(&path, 2, 1).unwrap());

        let (release, held) = mpsc::channel::<()>();
        let (started_tx, started) = tokio::sync::oneshot::channel();
        let holding = {
            let readers = readers.clone();
            tokio::spawn(async move {
                readers
                    .read_team(1, move |_| {
                        let _ = started_tx.send(());
                        let _ = held.recv();
                        Ok(())
                    })
                    .await
            })
        };
        started.await.unwrap();
        let second_started = Arc::new(AtomicBool::new(false));
        let second = {
            let (readers, flag) = (readers.clone(), second_started.clone());
            tokio::spawn(async move {
                readers
                    .read_team(1, move |_| {
                        flag.store(true, Ordering::SeqCst);
                        Ok(())
                    })
                    .await
            })
        };
        let other_team = tokio::time::timeout(
            Duration::from_secs(30),
            readers.read_team(2, |conn| {
                Ok(conn.query_row("select x from t", [], |r| r.get::<_, i64>(0))?)
            }),
        )
        .await
        .expect("another team reads while team 1 is busy")
        .unwrap();
        assert_eq!(other_team, 1);
        assert!(
            !second_started.load(Ordering::SeqCst),
            "team 1's second read waits for its share"
        );
        release.send(()).unwrap();
        holding.await.unwrap().unwrap();
        second.await.unwrap().unwrap();
        assert!(second_started.load(Ordering::SeqCst));
    }
}
