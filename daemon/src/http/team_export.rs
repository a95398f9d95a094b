//! An export spooled before it is sent. The store reads the team from one snapshot (a read
//! transaction); held at a slow client's pace, that snapshot kept SQLite's WAL from being
//! checkpointed (1.4 GB in 50 s) and PostgreSQL's dead rows from being vacuumed (other teams'
//! throughput −62 %). So the records are written as fast as the disk takes them to an unnamed
//! temporary file in the data directory, the snapshot ends, and only then does the client read
//! the file, at any pace, holding nothing in the database. At most [`MAX_SPOOLING`] exports
//! spool at once (the others wait their turn), so their disk use and snapshots stay bounded;
//! `/metrics` shows them (`huddle_exports_spooling`, `huddle_export_spooled_bytes_total`).

use super::error::{ApiError, ApiResult};
use super::AppState;
use crate::store::StoreError;
use axum::http::StatusCode;
use huddle_wire::codes;
use std::sync::OnceLock;
use tokio::io::{AsyncSeekExt, AsyncWriteExt};
use tokio::sync::Semaphore;

/// Exports spooling at the same time, per daemon process.
pub const MAX_SPOOLING: usize = 4;

fn spooling() -> &'static Semaphore {
    static SLOTS: OnceLock<Semaphore> = OnceLock::new();
    SLOTS.get_or_init(|| Semaphore::new(MAX_SPOOLING))
}

fn spool_failed(e: std::io::Error) -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        codes::STORE_UNAVAILABLE,
        format!("cannot spool the export in the data directory: {e}"),
    )
}

/// Team `team_id`'s export as a file read from its start, and its length in bytes. A team
/// deleted before its first record is a 404.
pub async fn spool(state: &AppState, team_id: i64) -> ApiResult<(tokio::fs::File, u64)> {
    let _slot = spooling()
        .acquire()
        .await
        .map_err(|_| ApiError::from(StoreError::Unavailable("shutting down".into())))?;
    let _gauge = crate::metrics::ExportSpooling::start();
    let dir = state.settings.server.data_dir.clone();
    let file = tokio::task::spawn_blocking(move || tempfile::tempfile_in(dir))
        .await
        .map_err(|e| spool_failed(std::io::Error::other(e)))?
        .map_err(spool_failed)?;
    let mut out = tokio::io::BufWriter::new(tokio::fs::File::from_std(file));
    let mut records = state.store.export_team(team_id).await?;
    let mut bytes = 0u64;
    let mut first = true;
    while let Some(record) = records.recv().await {
        let line = record.and_then(|r| r.to_line())?;
        out.write_all(line.as_bytes()).await.map_err(spool_failed)?;
        bytes += line.len() as u64;
        first = false;
    }
    if first {
        return Err(StoreError::Internal("the export ended at once".into()).into());
    }
    out.flush().await.map_err(spool_failed)?;
    let mut file = out.into_inner();
    file.rewind().await.map_err(spool_failed)?;
    crate::metrics::export_spooled(bytes);
    Ok((file, bytes))
}
