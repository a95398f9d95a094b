//! SQLite backend: WAL mode, one writer thread with group commit (`writer`), a pool of
//! read-only connections beside it (`readers`). Each area's SQL sits in its own file.
//!
//! Each area's functions take the same parameters as their PostgreSQL counterparts
//! (`store/postgres/`), and `store_impl.rs` repeats the trait's signatures: a repetition on
//! purpose, since here they are blocking rusqlite calls inside a writer job and there async sqlx
//! calls inside a team's transaction. What they decide is written once, in `store/rules/`.

mod agents;
mod backup;
mod checkpointer;
mod claims;
mod deps;
mod empty_claims;
mod events;
mod export;
mod fair_queue;
mod gates;
mod import;
mod memory;
mod messages;
mod migrate;
mod outage;
mod probe;
mod progress;
mod readers;
mod retention;
mod rows;
mod scopes;
mod search;
mod spend;
mod spend_report;
mod store_impl;
mod task_state;
mod tasks;
mod team_admin;
mod team_purge;
mod test_history;
mod unsent;
mod usage;
mod webhooks;
mod writer;

use super::error::{StoreError, StoreResult};
use crate::hub::Hub;
use readers::Readers;
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use writer::Writer;

pub use backup::backup;

pub use crate::config::Synchronous;

/// How to open the database.
#[derive(Debug, Clone)]
pub struct SqliteOptions {
    pub path: PathBuf,
    pub synchronous: Synchronous,
    pub read_connections: usize,
    pub max_batch: usize,
    pub default_max_attempts: i64,
    pub memory_max_bytes: usize,
    pub memory_history_limit: usize,
    pub history: crate::config::HistorySettings,
    pub limits: crate::config::LimitSettings,
    /// Apply missing migrations (false: only check, refusing an older schema).
    pub migrate: bool,
    /// After a time the writer could not commit, leases live before it last at least this
    /// long from when writes resume (`writer::Outage`).
    pub outage_lease_grace_ms: i64,
}

pub struct SqliteStore {
    writer: Mutex<Option<Writer>>,
    /// Fires when the writer thread has checkpointed and closed the write connection.
    writer_done: Mutex<Option<tokio::sync::oneshot::Receiver<()>>>,
    readers: Arc<Readers>,
    empty_claims: Arc<empty_claims::EmptyClaims>,
    options: SqliteOptions,
}

impl SqliteStore {
    /// Opens (creating if missing) the database, applies migrations and starts the writer.
    pub fn open(options: SqliteOptions, hub: Arc<Hub>) -> StoreResult<Self> {
        let mut conn = open_writer(&options.path, options.synchronous)?;
        super::schema::log(&migrate::apply(&mut conn, options.migrate)?);
        team_purge::purge_leftovers(&mut conn)?;
        let readers = Arc::new(Readers::open(
            &options.path,
            options.read_connections.max(1),
            options.limits.max_reads_per_team,
        )?);
        let (path, sync) = (options.path.clone(), options.synchronous);
        let pool = readers.clone();
        let reopen = writer::Reopen {
            open: Box::new(move || open_writer(&path, sync)),
            recycle_readers: Box::new(move || pool.recycle()),
        };
        let empty_claims = Arc::new(empty_claims::EmptyClaims::default());
        let published = writer::Published {
            hub,
            empty_claims: empty_claims.clone(),
        };
        let checkpointer = checkpointer::Checkpointer::start(options.path.clone());
        let (writer, done) = Writer::start(
            conn,
            reopen,
            published,
            checkpointer,
            options.max_batch,
            options.outage_lease_grace_ms,
        );
        Ok(SqliteStore {
            writer: Mutex::new(Some(writer)),
            writer_done: Mutex::new(Some(done)),
            readers,
            empty_claims,
            options,
        })
    }

    /// `huddled migrate`: applies the missing migrations to the file at `path` and closes it.
    pub fn migrate(path: &Path) -> StoreResult<super::schema::SchemaState> {
        let mut conn = open_writer(path, Synchronous::Full)?;
        migrate::apply(&mut conn, true)
    }

    pub fn path(&self) -> &Path {
        &self.options.path
    }

    fn writer(&self) -> StoreResult<Writer> {
        self.writer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| StoreError::Unavailable("the store is closed".into()))
    }

    /// Stops the writer after the queued jobs and waits for it to close the connection.
    async fn shut_down(&self) {
        self.writer.lock().unwrap_or_else(|p| p.into_inner()).take();
        let done = self
            .writer_done
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(done) = done {
            let _ = done.await;
        }
        self.readers.close();
    }
}

fn open_writer(path: &Path, synchronous: Synchronous) -> StoreResult<Connection> {
    let conn = Connection::open(path).map_err(map_sqlite_error)?;
    configure(&conn, synchronous)?;
    // Checkpoints run on a thread of their own (`checkpointer.rs`), not inside a commit. A WAL
    // that a burst (or a long-lived reader) grew is cut back to 64 MiB when it starts over.
    // Each job runs in a savepoint, whose journal SQLite spills past 64 KiB to a new temporary
    // file (created, written, unlinked and closed): a batched claim or completion did that in
    // every batch. In memory it holds only the pages the open job changed.
    conn.execute_batch(
        "pragma wal_autocheckpoint = 0;
         pragma journal_size_limit = 67108864;
         pragma temp_store = memory;",
    )
    .map_err(map_sqlite_error)?;
    // Every statement the writer runs stays prepared: at rusqlite's default of 16, the ~100
    // statements of the store pushed each other out, and every job parsed and planned its SQL
    // again.
    conn.set_prepared_statement_cache_capacity(WRITER_STATEMENTS);
    Ok(conn)
}

/// Prepared statements kept per connection: the writer runs every statement of the store;
/// a reader runs the read side, and there are several readers.
const WRITER_STATEMENTS: usize = 256;
const READER_STATEMENTS: usize = 64;

fn configure(conn: &Connection, synchronous: Synchronous) -> StoreResult<()> {
    let sync = match synchronous {
        Synchronous::Full => "full",
        Synchronous::Normal => "normal",
    };
    conn.execute_batch(&format!(
        "pragma journal_mode = wal;
         pragma synchronous = {sync};
         pragma foreign_keys = on;
         pragma busy_timeout = 5000;
         pragma cache_size = -8000;"
    ))
    .map_err(map_sqlite_error)
}

fn open_reader(path: &Path) -> StoreResult<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI,
    )
    .map_err(map_sqlite_error)?;
    // Small caches: the OS page cache holds the file too, and RSS stays low with many readers.
    conn.execute_batch("pragma busy_timeout = 5000; pragma cache_size = -2000;")
        .map_err(map_sqlite_error)?;
    conn.set_prepared_statement_cache_capacity(READER_STATEMENTS);
    Ok(conn)
}

/// Disk full, read-only files and I/O failures mean the store cannot serve (503); anything else
/// is a bug (500, logged).
pub(crate) fn map_sqlite_error(e: rusqlite::Error) -> StoreError {
    use rusqlite::ErrorCode::*;
    if let rusqlite::Error::SqliteFailure(f, _) = &e {
        if matches!(
            f.code,
            DiskFull
                | ReadOnly
                | SystemIoFailure
                | CannotOpen
                | DatabaseBusy
                | DatabaseLocked
                | OutOfMemory
        ) {
            return StoreError::Unavailable(e.to_string());
        }
    }
    StoreError::Internal(e.to_string())
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        map_sqlite_error(e)
    }
}
