//! The one list of columns each kind of record is read from and written back to, on every
//! backend: `sql.rs` builds both backends' statements from these lists, `rows.rs` turns a row
//! into a record and a record into values in the same order. Every other column of a team's
//! table is named in `left_out`, with the reason beside it; the store test
//! `tests/tests/store/transfer_columns.rs` checks each list against both backends' schemas,
//! so a column added to a team's table must be exported or left out here on purpose.

/// A column with how it is compared and extracted: numbers as numbers, text byte-wise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Int(&'static str),
    Text(&'static str),
}

impl Column {
    pub fn name(self) -> &'static str {
        match self {
            Column::Int(name) | Column::Text(name) => name,
        }
    }
}

/// The table behind one kind of record.
#[derive(Debug)]
pub struct Table {
    /// The record kind (`transfer::KINDS`).
    pub kind: &'static str,
    pub name: &'static str,
    /// The column naming the team: `id` in `teams`, `team_id` elsewhere. Never exported: an
    /// import makes a new team.
    pub team: &'static str,
    /// What an export reads and an import writes, in this order.
    pub columns: &'static [&'static str],
    /// The table's other columns: this database's own, or derived from the exported ones.
    pub left_out: &'static [&'static str],
    /// The rows' order in a file (the same on every backend).
    pub order: &'static [Column],
    /// Rows of another table that travel inside this table's records.
    pub children: Option<&'static Children>,
}

/// A table whose rows travel inside their parent's record (a task's blockers, a run's
/// outcomes), as a JSON array of rows, each an array of `columns`.
#[derive(Debug)]
pub struct Children {
    pub name: &'static str,
    /// The child columns naming the parent row, each with the parent column it holds.
    pub keys: &'static [(&'static str, &'static str)],
    pub columns: &'static [Column],
    pub order: Column,
    /// What the rows are called in the parent's select.
    pub alias: &'static str,
}

/// Columns SQLite keeps up to date in another table, each with the expression an export reads
/// instead (`p` is the exported row): a team's sequences live in `team_seqs` (SQLite migration
/// 0015), so that storing them does not rewrite the team's memory document; the `teams`
/// columns only take an import's values, which a trigger copies over.
pub const SQLITE_KEPT_ELSEWHERE: &[(&str, &str, &str)] = &[
    (
        "teams",
        "msg_seq",
        "(select s.msg_seq from team_seqs s where s.team_id = p.id)",
    ),
    (
        "teams",
        "event_seq",
        "(select s.event_seq from team_seqs s where s.team_id = p.id)",
    ),
];

pub const TEAMS: Table = Table {
    kind: "team",
    name: "teams",
    team: "id",
    columns: &[
        "name",
        "created_at",
        "msg_seq",
        "event_seq",
        "memory_doc",
        "memory_version",
    ],
    left_out: &[],
    order: &[],
    children: None,
};

pub const AGENTS: Table = Table {
    kind: "agent",
    name: "agents",
    team: "team_id",
    columns: &[
        "name",
        "role",
        "token_hash",
        "created_at",
        "last_seen_at",
        "inbox_cursor",
        "revoked_at",
    ],
    // The row id is this database's; agents are named.
    left_out: &["id"],
    order: &[Column::Int("id")],
    children: None,
};

pub const TASK_COUNTERS: Table = Table {
    kind: "counter",
    name: "task_counters",
    team: "team_id",
    columns: &["prefix", "next_number"],
    left_out: &[],
    order: &[Column::Text("prefix")],
    children: None,
};

pub const TASK_DEPS: Children = Children {
    name: "task_deps",
    keys: &[("team_id", "team_id"), ("task_id", "id")],
    columns: &[Column::Text("blocker_id")],
    order: Column::Text("blocker_id"),
    alias: "blocked_by",
};

pub const TASKS: Table = Table {
    kind: "task",
    name: "tasks",
    team: "team_id",
    columns: &[
        "id",
        "prefix",
        "number",
        "subject",
        "description",
        "active_form",
        "status",
        "owner",
        "claimed_by",
        "attempts",
        "max_attempts",
        "metadata",
        "result",
        "failure_reason",
        "version",
        "created_at",
        "updated_at",
    ],
    // A lease (and a heartbeat waiting to extend it) stays behind with its worker: a task in
    // progress travels released. The count of open blockers is recounted after an import.
    left_out: &["lease_expires_at", "heard_until", "unmet_blockers"],
    order: &[Column::Text("id")],
    children: Some(&TASK_DEPS),
};

pub const MESSAGES: Table = Table {
    kind: "message",
    name: "messages",
    team: "team_id",
    columns: &[
        "seq",
        "id",
        "sender",
        "recipient",
        "type",
        "summary",
        "data",
        "created_at",
    ],
    // Generated from `data` and `summary` by the database.
    left_out: &["task_ref", "search"],
    order: &[Column::Int("seq")],
    children: None,
};

pub const IDEMPOTENCY_KEYS: Table = Table {
    kind: "idempotency_key",
    name: "idempotency_keys",
    team: "team_id",
    columns: &["agent", "key", "seq"],
    left_out: &[],
    order: &[Column::Text("agent"), Column::Text("key")],
    children: None,
};

pub const EVENTS: Table = Table {
    kind: "event",
    name: "events",
    team: "team_id",
    columns: &["seq", "type", "data", "created_at"],
    left_out: &[],
    order: &[Column::Int("seq")],
    children: None,
};

pub const MEMORY_HISTORY: Table = Table {
    kind: "memory_change",
    name: "memory_history",
    team: "team_id",
    columns: &["version", "agent", "kind", "patch", "created_at"],
    left_out: &[],
    order: &[Column::Int("version")],
    children: None,
};

pub const TEST_OUTCOMES: Children = Children {
    name: "test_outcomes",
    keys: &[("run_id", "id")],
    columns: &[Column::Text("nodeid"), Column::Int("outcome")],
    order: Column::Text("nodeid"),
    alias: "outcomes",
};

pub const TEST_RUNS: Table = Table {
    kind: "test_run",
    name: "test_runs",
    team: "team_id",
    columns: &[
        "project",
        "tree",
        "agent",
        "started_at",
        "created_at",
        "passed",
        "failed",
        "skipped",
        "errors",
        "tier",
        "task",
        "artifacts",
    ],
    // The row id is this database's (the outcomes travel inside their run).
    left_out: &["id"],
    order: &[Column::Int("id")],
    children: Some(&TEST_OUTCOMES),
};

pub const WEBHOOKS: Table = Table {
    kind: "webhook",
    name: "webhooks",
    team: "team_id",
    columns: &[
        "url",
        "secret",
        "events",
        "created_by",
        "created_at",
        "message_cursor",
        "event_cursor",
    ],
    // The row id is this database's; the lease names a replica of this daemon.
    left_out: &["id", "lease_holder", "lease_until"],
    order: &[Column::Int("id")],
    children: None,
};

pub const TEAM_SETTINGS: Table = Table {
    kind: "settings",
    name: "team_settings",
    team: "team_id",
    columns: &[
        "max_tasks",
        "max_edges",
        "max_messages",
        "max_storage_bytes",
        "retention",
        "questions",
    ],
    left_out: &[],
    order: &[],
    children: None,
};

/// Every exported table, in the order a file holds its records (the `end` has none).
pub const EXPORTED: [&Table; 11] = [
    &TEAMS,
    &AGENTS,
    &TASK_COUNTERS,
    &TASKS,
    &MESSAGES,
    &IDEMPOTENCY_KEYS,
    &EVENTS,
    &MEMORY_HISTORY,
    &TEST_RUNS,
    &WEBHOOKS,
    &TEAM_SETTINGS,
];

/// The tables of a team (`team_admin::TEAM_TABLES`) an export leaves out whole, and why.
pub const NOT_EXPORTED: [(&str, &str); 6] = [
    (
        "webhook_deliveries",
        "what this daemon sent, not state the team needs",
    ),
    (
        "team_usage",
        "the team's counters, kept by the store as the rows are imported",
    ),
    (
        "messages_fts_mark",
        "how far SQLite's search index has read; an imported team is indexed at its first search",
    ),
    (
        "spend_calls",
        "this daemon's model-spending ledger; an imported team starts spending afresh",
    ),
    (
        "spend_days",
        "the ledger's daily totals, left out with the ledger",
    ),
    (
        "spend_budgets",
        "a budget bounds spending recorded here; set it again on the imported team",
    ),
];
