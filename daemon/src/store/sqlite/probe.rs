//! Whether the data directory can take writes. SQLite's own reads keep working on a full disk
//! or a read-only mount, so `/readyz` would say ready while every write fails; a small file
//! written and synced beside the database finds out as the next commit would.

use crate::store::error::{StoreError, StoreResult};
use std::io::Write;
use std::path::Path;

/// Bytes the probe writes: a few pages, like a small commit with its WAL frames.
const PROBE_BYTES: usize = 16 * 1024;

const PROBE_FILE: &str = ".huddle-write-probe";

/// Writes, syncs and removes a small file in `dir`; a failure is the store being read-only.
pub(super) fn probe_writes(dir: &Path) -> StoreResult<()> {
    let path = dir.join(PROBE_FILE);
    let written = std::fs::File::create(&path).and_then(|mut file| {
        file.write_all(&[0u8; PROBE_BYTES])?;
        file.sync_all()
    });
    let _ = std::fs::remove_file(&path);
    written.map_err(|e| {
        StoreError::Unavailable(format!(
            "the data directory {} cannot take writes: {e}",
            dir.display()
        ))
    })
}
