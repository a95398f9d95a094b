//! A whole team at once, for the admin: delete it with everything it owns, export it as JSON
//! Lines ([`super::transfer`]), import such a file as a new team.

use super::error::{StoreError, StoreResult};
use super::quotas::check_settings_record;
use super::rules::{fmt_time, validate};
use super::transfer::{Record, TeamRecord};
use async_trait::async_trait;
use huddle_wire::{codes, Team};
use tokio::sync::mpsc;

/// Records an export has read but the reader has not taken yet: bounds its memory whatever
/// the team's size (the reader slows the database's reads, not the other way round). Few, as
/// a record may be as large as the memory document or a task's result (1 MiB by default): a
/// client that reads an export slowly holds at most this many records in the daemon.
pub const EXPORT_BUFFER: usize = 16;

/// Every table holding a team's rows, in the order a deletion empties them (children before
/// parents: `webhook_deliveries` has no foreign key, `test_outcomes` hangs on `test_runs`).
/// The store contract test checks that no table with a team column is missing here.
pub const TEAM_TABLES: [&str; 19] = [
    "webhook_deliveries",
    "webhooks",
    "test_outcomes",
    "test_runs",
    "memory_history",
    "events",
    "idempotency_keys",
    "messages",
    "messages_fts_mark",
    "task_deps",
    "tasks",
    "task_counters",
    "agents",
    "spend_calls",
    "spend_days",
    "spend_budgets",
    // Kept by triggers as the rows above go; last, so nothing recreates them.
    "team_usage",
    "team_settings",
    "teams",
];

/// A team's tables only SQLite has, emptied by a trigger as the team's `teams` row goes
/// (`team_seqs`: the event and message sequences, migration 0015).
pub const SQLITE_TEAM_TABLES: [&str; 1] = ["team_seqs"];

/// The records of an import after its `team` record, each with its line number (for errors).
pub type ImportRecords = mpsc::Receiver<(usize, Record)>;

#[async_trait]
pub trait TeamAdminStore {
    /// Deletes the team and every row of it, in one transaction; `NotFound` when absent.
    /// On PostgreSQL every replica is told, so tokens and streams end everywhere.
    async fn delete_team(&self, team_id: i64) -> StoreResult<()>;
    /// The team's records in file order, read from one snapshot while the receiver takes
    /// them ([`EXPORT_BUFFER`] at most waiting). An error ends the records (the file then
    /// has no `end` and any import refuses it).
    async fn export_team(&self, team_id: i64) -> StoreResult<mpsc::Receiver<StoreResult<Record>>>;
    /// Creates a team from an export, all or nothing: `team` (its name possibly changed),
    /// then `records` (checked for shape already). A name in use: 409 `duplicate_team`.
    async fn import_team(&self, team: TeamRecord, records: ImportRecords) -> StoreResult<Team>;
}

/// The team an import answers with, once its name is checked (before anything is written).
pub fn check_import(team: &TeamRecord) -> StoreResult<Team> {
    validate::name("name", &team.name)?;
    Ok(Team {
        name: team.name.clone(),
        created_at: fmt_time(team.created_at),
    })
}

/// The import's name is taken: 409, as for a new team.
pub fn duplicate_team(name: &str) -> StoreError {
    StoreError::conflict(
        codes::DUPLICATE_TEAM,
        format!("team {name} already exists: delete it first, or import under another name"),
    )
}

/// The records stopped before the `end` record (the spooled file could not be read back):
/// nothing is kept.
pub fn records_cut_short() -> StoreError {
    StoreError::Unavailable("the import's records ended before its end record".into())
}

/// Refuses a record no database constraint would: settings out of range.
pub fn check_record(line: usize, record: &Record) -> StoreResult<()> {
    match record {
        Record::Settings(settings) => {
            check_settings_record(settings).map_err(|why| import_error(line, record.kind(), &why))
        }
        _ => Ok(()),
    }
}

/// What a refused insert of line `line` means: another team's token (409), or a row that
/// contradicts the file itself (400 naming the line).
pub fn import_error(line: usize, kind: &str, message: &str) -> StoreError {
    if message.contains("token_hash") {
        return StoreError::conflict(
            codes::DUPLICATE_AGENT,
            format!(
                "line {line}: an agent's token is already in use by an agent of another team \
                 (this daemon holds the team already, maybe under another name: delete it \
                 first)"
            ),
        );
    }
    StoreError::invalid(
        &format!("line {line}"),
        format!("line {line}: this {kind} contradicts an earlier record ({message})"),
    )
}

/// Checks that bind the records to each other, run after the last insert (each query
/// answers a description of the first problem, or nothing).
pub const AFTER_IMPORT_CHECKS: [(&str, &str); 4] = [
    (
        "select 'task ' || d.task_id || ' is blocked by ' || d.blocker_id || ', which the file does not hold'
         from task_deps d where d.team_id = $1 and not exists (
             select 1 from tasks b where b.team_id = d.team_id and b.id = d.blocker_id)",
        "tasks",
    ),
    (
        "select 'message ' || m.seq || ' is past the team''s msgSeq'
         from messages m join teams t on t.id = m.team_id where m.team_id = $1 and m.seq > t.msg_seq",
        "messages",
    ),
    (
        "select 'event ' || e.seq || ' is past the team''s eventSeq'
         from events e join teams t on t.id = e.team_id where e.team_id = $1 and e.seq > t.event_seq",
        "events",
    ),
    (
        "select 'memory change ' || h.version || ' is past the team''s memoryVersion'
         from memory_history h join teams t on t.id = h.team_id
         where h.team_id = $1 and h.version > t.memory_version",
        "memory",
    ),
];

/// A blocker's count of unmet blockers, recomputed from the imported edges and statuses.
pub const RECOUNT_BLOCKERS: &str = "update tasks set unmet_blockers = (
         select count(*) from task_deps d join tasks b on b.team_id = d.team_id and b.id = d.blocker_id
         where d.team_id = tasks.team_id and d.task_id = tasks.id and b.status <> 'completed')
     where team_id = $1";
