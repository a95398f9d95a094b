//! What the raw loops on huddle's rows share: a consistent copy of a running daemon's
//! database, opened with the writer's settings, and a task row with the event data the writer
//! makes from it.

use super::Sync;
use rusqlite::{Connection, Row};
use serde::Serialize;
use serde_json::value::RawValue;
use std::path::Path;

/// Copies the database of a running daemon (`VACUUM INTO`, a consistent copy) into `dir`.
pub fn copy_of(live_db: &Path, dir: &Path) -> Result<std::path::PathBuf, String> {
    let copy = dir.join("own-rows.db");
    let live = Connection::open_with_flags(live_db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| e.to_string())?;
    live.execute("vacuum into ?1", [copy.to_string_lossy()])
        .map_err(|e| e.to_string())?;
    Ok(copy)
}

/// Opens `db` with the writer's settings (`store/sqlite/mod.rs`), except that checkpoints run
/// inside commits, as in the bare loop: the daemon runs them on a thread of its own, and a WAL
/// that only grows (no checkpoint at all) made these loops slower, not faster.
pub fn open_as_writer(db: &Path, sync: Sync) -> Result<Connection, String> {
    let conn = Connection::open(db).map_err(|e| e.to_string())?;
    conn.execute_batch(&format!(
        "pragma journal_mode = wal; pragma synchronous = {}; pragma foreign_keys = on;
         pragma cache_size = -8000; pragma temp_store = memory;",
        sync.as_str()
    ))
    .map_err(|e| e.to_string())?;
    Ok(conn)
}

/// The columns of a task row the loops rewrite or put in its event (the others stay null or
/// as stored, as they do for these tasks in the daemon).
pub struct TaskRow {
    pub id: String,
    pub subject: String,
    pub description: String,
    pub metadata: String,
    pub attempts: i64,
    pub max_attempts: i64,
    pub version: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

impl TaskRow {
    /// The task in a row of `STATE_COLUMNS`, as the writer reads it.
    pub fn of(r: &Row<'_>) -> rusqlite::Result<TaskRow> {
        Ok(TaskRow {
            id: r.get(0)?,
            subject: r.get(1)?,
            description: r.get(2)?,
            metadata: r.get(10)?,
            attempts: r.get(8)?,
            max_attempts: r.get(9)?,
            version: r.get(13)?,
            created_at: r.get(14)?,
            updated_at: r.get(15)?,
        })
    }

    /// The event's data: the task as the API shows it (`huddle_wire::Task`'s fields), its
    /// metadata spliced in as stored; `packed`, as huddle stores it (a JSON array in that
    /// order behind the layout's number, `store::rules::task_event`), else as an object.
    pub fn event_json(
        &self,
        status: &str,
        holder: Option<&str>,
        lease: Option<i64>,
        edges: &Edges,
        packed: bool,
    ) -> String {
        let metadata: &RawValue = serde_json::from_str(&self.metadata)
            .unwrap_or_else(|_| serde_json::from_str("{}").expect("an empty object is JSON"));
        let task = EventTask {
            id: &self.id,
            subject: &self.subject,
            description: &self.description,
            active_form: None,
            status,
            owner: None,
            claimed_by: holder,
            lease_expires_at: lease.map(rfc3339),
            attempts: self.attempts,
            max_attempts: self.max_attempts,
            blocked_by: &edges.0,
            blocks: &edges.1,
            metadata,
            result: None,
            failure_reason: None,
            version: self.version,
            created_at: rfc3339(self.created_at),
            updated_at: rfc3339(self.updated_at),
        };
        if packed {
            serde_json::to_string(&task.packed())
        } else {
            serde_json::to_string(&task)
        }
        .unwrap_or_default()
    }
}

/// What an event's data holds: the task's fields as `huddle_wire::Task` names them.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EventTask<'a> {
    id: &'a str,
    subject: &'a str,
    description: &'a str,
    active_form: Option<&'a str>,
    status: &'a str,
    owner: Option<&'a str>,
    claimed_by: Option<&'a str>,
    lease_expires_at: Option<String>,
    attempts: i64,
    max_attempts: i64,
    blocked_by: &'a [String],
    blocks: &'a [String],
    metadata: &'a RawValue,
    result: Option<&'a str>,
    failure_reason: Option<&'a str>,
    version: i64,
    created_at: String,
    updated_at: String,
}

/// [`EventTask`] as a JSON array behind the layout's number (1).
#[derive(Serialize)]
struct PackedTask<'a>(
    u8,
    &'a str,
    &'a str,
    &'a str,
    Option<&'a str>,
    &'a str,
    Option<&'a str>,
    Option<&'a str>,
    &'a Option<String>,
    i64,
    i64,
    &'a [String],
    &'a [String],
    &'a RawValue,
    Option<&'a str>,
    Option<&'a str>,
    i64,
    &'a str,
    &'a str,
);

impl EventTask<'_> {
    fn packed(&self) -> PackedTask<'_> {
        PackedTask(
            1,
            self.id,
            self.subject,
            self.description,
            self.active_form,
            self.status,
            self.owner,
            self.claimed_by,
            &self.lease_expires_at,
            self.attempts,
            self.max_attempts,
            self.blocked_by,
            self.blocks,
            self.metadata,
            self.result,
            self.failure_reason,
            self.version,
            &self.created_at,
            &self.updated_at,
        )
    }
}

pub type Edges = (Vec<String>, Vec<String>);

fn rfc3339(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
