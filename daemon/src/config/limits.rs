//! `[limits]`: rates, sizes and per-team quotas (kept apart from `config.rs` for its length).

use serde::{Deserialize, Serialize};

/// `[limits]`: how fast and how much clients may send. The one definition: the HTTP layer and
/// every store backend check against these values (the protocol's fixed bounds, such as name
/// lengths, are `huddle_wire::limits`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitSettings {
    /// Requests per minute per token (a token bucket).
    pub requests_per_minute: u64,
    /// Requests a token may make at once before the rate applies.
    pub burst: u64,
    /// Failed authentications per minute per client address (a token bucket), and the burst.
    pub failed_auth_per_minute: u64,
    pub failed_auth_burst: u64,
    /// Client addresses whose failed authentications are tracked one by one (a hard cap).
    pub max_tracked_clients: usize,
    /// Open streams per agent.
    pub max_streams_per_token: usize,
    /// Open streams per team, all its agents together.
    pub max_streams_per_team: usize,
    /// Open streams per client address, all teams together (per replica: each sees the
    /// addresses of its own connections).
    pub max_streams_per_address: usize,
    /// How often a replica marks itself alive in the database, in milliseconds; the rate and
    /// the per-token and per-team stream caps are shared among the live replicas
    /// (`replicas.rs`). PostgreSQL only: a SQLite daemon is alone.
    pub replica_heartbeat_ms: u64,
    /// A replica not heard from for this long no longer counts, in milliseconds.
    pub replica_expiry_ms: u64,
    /// Agents per team (revoked ones do not count).
    pub max_agents_per_team: usize,
    /// Read connections one team's requests may hold at once (SQLite's read pool, or a
    /// PostgreSQL replica's pool), so one team's heavy reads never take every connection.
    pub max_reads_per_team: usize,
    /// Items per page of a list.
    pub max_page_size: usize,
    /// Bytes per page of a list of large items (tasks, memory history, messages and their
    /// search, inbox): a page
    /// stops before this much JSON (a single larger item comes alone) and its `next` goes on
    /// from there, so one answer, and what a slow reader holds, stays this size.
    pub max_page_bytes: usize,
    /// Items per batch create, batch completion or batch post.
    pub max_batch: usize,
    /// Task `subject` and `activeForm`, in characters.
    pub max_subject_chars: usize,
    /// Task `description` and failure `reason`, in characters.
    pub max_text_chars: usize,
    /// Message `summary`, in characters.
    pub max_summary_chars: usize,
    /// Nesting depth of `metadata`, message `data` and the shared memory document.
    pub max_json_depth: usize,
    /// Blockers per task.
    pub max_blocked_by: usize,
    /// `blockedBy` edges one request may add in all (a batch create, or a patch): bounds the
    /// work a single request puts on the one writer every team shares.
    pub max_blocked_by_per_request: usize,
    /// `blockedBy` edges the cycle check of one task's new blockers may read (the part of the
    /// graph they reach); past it the change is refused with 413, so no allowed request walks
    /// a wide graph inside the writer every team shares.
    pub max_dependency_walk: usize,
    /// Serialised size of a message's `data`, in bytes.
    pub max_message_bytes: usize,
    /// Test outcomes per posted test-history run.
    pub max_test_outcomes: usize,
    /// A test's node id in the test history, in characters.
    pub max_nodeid_chars: usize,
    /// Per-team quotas (0: none), each overridable per team by the admin
    /// (`PUT /v1/teams/{team}/settings`): tasks stored (not yet deleted by retention), …
    pub max_tasks_per_team: u64,
    /// … dependency edges, …
    pub max_edges_per_team: u64,
    /// … messages stored, …
    pub max_messages_per_team: u64,
    /// … and the approximate bytes of its tasks, messages and shared memory document.
    pub max_storage_bytes_per_team: u64,
}

impl Default for LimitSettings {
    fn default() -> Self {
        LimitSettings {
            requests_per_minute: 120_000,
            burst: 2_000,
            failed_auth_per_minute: 60,
            failed_auth_burst: 100,
            max_tracked_clients: 10_000,
            max_streams_per_token: 32,
            max_streams_per_team: 256,
            max_streams_per_address: 1024,
            replica_heartbeat_ms: 1_000,
            replica_expiry_ms: 5_000,
            max_agents_per_team: 1000,
            max_reads_per_team: 2,
            max_page_size: 1_000,
            max_page_bytes: 2 * 1024 * 1024,
            max_batch: 1_000,
            max_subject_chars: 500,
            max_text_chars: 20_000,
            max_summary_chars: 2_000,
            max_json_depth: 32,
            max_blocked_by: 100,
            max_blocked_by_per_request: 5_000,
            max_dependency_walk: 20_000,
            max_message_bytes: 64 * 1024,
            max_test_outcomes: 10_000,
            max_nodeid_chars: 1_000,
            max_tasks_per_team: 1_000_000,
            max_edges_per_team: 2_000_000,
            max_messages_per_team: 5_000_000,
            max_storage_bytes_per_team: 8 * 1024 * 1024 * 1024,
        }
    }
}
