//! `huddled backup --to FILE`: a consistent copy of a live SQLite database.
//!
//! `VACUUM INTO` reads the database in one read transaction on its own connection: in WAL mode
//! it neither blocks the running daemon's writer nor sees half of a commit, and it writes a
//! compact, self-contained file (no `-wal`) that a daemon can open as its `huddle.db`.

use super::super::error::{StoreError, StoreResult};
use super::map_sqlite_error;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;

/// Copies the database at `database` into `to`, a new file made 0600 (it holds token hashes).
pub fn backup(database: &Path, to: &Path) -> StoreResult<()> {
    if !database.exists() {
        return Err(StoreError::Unavailable(format!(
            "no database at {}",
            database.display()
        )));
    }
    // VACUUM INTO accepts an empty file: create it first, so its mode is ours from the start.
    create_private(to)
        .map_err(|e| StoreError::Unavailable(format!("cannot create {}: {e}", to.display())))?;
    let copied = copy(database, to);
    if copied.is_err() {
        let _ = std::fs::remove_file(to);
    }
    copied
}

fn copy(database: &Path, to: &Path) -> StoreResult<()> {
    let conn = Connection::open_with_flags(database, OpenFlags::SQLITE_OPEN_READ_WRITE)
        .map_err(map_sqlite_error)?;
    // Wait out a checkpoint or a writer that holds the lock briefly, rather than fail.
    conn.busy_timeout(std::time::Duration::from_secs(30))
        .map_err(map_sqlite_error)?;
    let target = to
        .to_str()
        .ok_or_else(|| StoreError::Unavailable(format!("{} is not a UTF-8 path", to.display())))?;
    conn.execute("vacuum into ?1", [target])
        .map_err(map_sqlite_error)?;
    Ok(())
}

#[cfg(unix)]
fn create_private(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map(drop)
}

#[cfg(not(unix))]
fn create_private(path: &Path) -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map(drop)
}
