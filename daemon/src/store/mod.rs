//! The store: every durable operation huddle performs, behind one `async_trait`.
//!
//! Handlers only ever see [`Store`]. What is not storage — every task transition, the blocker
//! rules, the bus's and shared memory's rules, input checks — is written once in [`rules`];
//! the backends (`sqlite`, `postgres`, each a cargo feature) only decode rows and run SQL.
//! Each method commits all or nothing (a backend may commit several callers' operations in
//! one transaction, each in its own savepoint). After a write commits, the store publishes
//! what changed to the [`crate::hub::Hub`], which wakes SSE subscribers and long-polling
//! claimers in process.

mod error;
pub mod gate_decisions;
pub mod gate_messages;
pub mod gate_patch;
pub mod gates;
pub mod open;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod quotas;
pub mod read_shares;
pub mod readiness;
pub mod retention;
pub mod rules;
pub mod schema;
pub mod spend;
#[cfg(feature = "sqlite")]
pub mod sqlite;
pub mod team_admin;
pub mod test_history;
pub mod transfer;
mod types;
pub mod webhooks;

// What callers outside the store name most, from the files that define them.
pub use error::{StoreError, StoreResult};
pub use types::*;

use async_trait::async_trait;
use huddle_wire::{
    Agent, Event, Memory, Message, NewTask, NewTestRun, PostMessage, Role, Task, TaskPatch, Team,
    TestRunSummary,
};
use test_history::StoredRun;

#[async_trait]
pub trait Store:
    webhooks::WebhookStore
    + gates::GateStore
    + quotas::QuotaStore
    + spend::SpendStore
    + team_admin::TeamAdminStore
    + Send
    + Sync
    + 'static
{
    // --- teams and identity ---
    async fn create_team(&self, name: &str) -> StoreResult<Team>;
    /// Resolves a team name to its id; `NotFound` when absent.
    /// Every team, by name (for the admin).
    async fn list_teams(&self) -> StoreResult<Vec<Team>>;
    async fn team_id(&self, name: &str) -> StoreResult<i64>;
    async fn create_agent(
        &self,
        team_id: i64,
        name: &str,
        role: Role,
        token_hash: &str,
    ) -> StoreResult<Agent>;
    /// The identity behind a token hash, or `None` for an unknown token.
    async fn authenticate(&self, token_hash: &str) -> StoreResult<Option<Caller>>;
    /// Replaces the agent's token hash (`Some`) or revokes it (`None`); returns the agent and
    /// the old hash so callers can evict it from caches. Unknown agent: `NotFound`.
    async fn set_agent_token(
        &self,
        team_id: i64,
        name: &str,
        token_hash: Option<&str>,
    ) -> StoreResult<(Agent, String)>;
    async fn list_agents(&self, team_id: i64) -> StoreResult<Vec<Agent>>;

    // --- shared task list ---
    /// Creates all tasks or none.
    async fn create_tasks(&self, caller: &Caller, tasks: Vec<NewTask>) -> StoreResult<Vec<Task>>;
    async fn list_tasks(&self, team_id: i64, filter: TaskFilter) -> StoreResult<Page<Task>>;
    async fn get_task(&self, team_id: i64, id: &str) -> StoreResult<Task>;
    /// The team's tasks in progress that have a file scope ([`rules::scope`]), for
    /// `why-not-ready`.
    async fn scope_held(&self, team_id: i64) -> StoreResult<Vec<rules::scope::Held>>;
    async fn update_task(
        &self,
        caller: &Caller,
        id: &str,
        patch: TaskPatch,
        if_match: Option<i64>,
    ) -> StoreResult<Task>;
    /// Atomically claims up to `max` ready tasks (oldest first) matching `prefixes`, the
    /// caller's name or role, and `project` ([`rules::project`]; `None`: any project).
    async fn claim_project_tasks(
        &self,
        caller: &Caller,
        prefixes: Vec<String>,
        project: Option<rules::ProjectFilter>,
        lease_ms: u64,
        max: usize,
    ) -> StoreResult<Vec<Task>>;
    /// Leaves a waiting claimer's claim with its place in the queue, for the store to serve in
    /// the write that makes a task ready (SQLite: `sqlite/writer/handoff.rs`). `None` when this
    /// store does not: the claimer is woken and looks again.
    fn park_claim(
        &self,
        _ticket: &crate::hub::WaitTicket,
        _caller: &Caller,
        _claim: ClaimToPark<'_>,
        _undelivered: Undelivered,
    ) -> Option<HandedOver> {
        None
    }
    /// Claims up to `max` ready tasks of any project.
    async fn claim_tasks(
        &self,
        caller: &Caller,
        prefixes: Vec<String>,
        lease_ms: u64,
        max: usize,
    ) -> StoreResult<Vec<Task>> {
        self.claim_project_tasks(caller, prefixes, None, lease_ms, max)
            .await
    }
    /// Claims the next ready task, if any.
    async fn claim_task(
        &self,
        caller: &Caller,
        prefixes: Vec<String>,
        lease_ms: u64,
    ) -> StoreResult<Option<Task>> {
        Ok(self
            .claim_tasks(caller, prefixes, lease_ms, 1)
            .await?
            .into_iter()
            .next())
    }
    async fn heartbeat(&self, caller: &Caller, id: &str, lease_ms: u64) -> StoreResult<Task>;
    async fn complete_task(
        &self,
        caller: &Caller,
        id: &str,
        result: Option<serde_json::Value>,
    ) -> StoreResult<Task>;
    /// Completes every listed task or none (each must be held by the caller, or the caller is a
    /// coordinator).
    async fn complete_tasks(
        &self,
        caller: &Caller,
        items: Vec<(String, Option<serde_json::Value>)>,
    ) -> StoreResult<Vec<Task>>;
    /// Fails the attempt: back to `pending` while attempts remain, `failed` when `final_` or on
    /// the last attempt (`rules::failure`).
    async fn fail_task(
        &self,
        caller: &Caller,
        id: &str,
        reason: String,
        final_: bool,
        result: Option<serde_json::Value>,
    ) -> StoreResult<Task>;
    async fn release_task(&self, caller: &Caller, id: &str) -> StoreResult<Task>;
    /// Moves agents' `lastSeenAt` forward to the given times (team id, agent, ms); never back.
    async fn record_presence(&self, seen: Vec<(i64, String, i64)>) -> StoreResult<()>;
    /// Returns expired leases to `pending` (or `failed` past `maxAttempts`); how many moved.
    async fn expire_leases(&self) -> StoreResult<usize>;
    /// Deletes what `policy` no longer keeps, at most `policy.batch` rows of each kind.
    async fn prune(&self, policy: &retention::RetentionPolicy) -> StoreResult<retention::Pruned>;

    // --- message bus ---
    /// Stores a message once per `(caller, idempotency_key)`; `replayed` when it already was.
    async fn post_message(
        &self,
        caller: &Caller,
        post: PostMessage,
        idempotency_key: Option<String>,
    ) -> StoreResult<Posted>;
    /// Stores every message or none, in order, with consecutive `seq`s; an item whose key the
    /// caller used before is answered with the stored message (`replayed`). Errors name the item
    /// (`messages[i]`).
    async fn post_messages(
        &self,
        caller: &Caller,
        items: Vec<(PostMessage, Option<String>)>,
    ) -> StoreResult<Vec<Posted>>;
    /// Stores a message and applies `ops` (given the memory document as it is) to the team's
    /// shared memory in the same transaction: both or neither (`team_msg`'s `state_update`).
    async fn post_message_changing_memory(
        &self,
        caller: &Caller,
        post: PostMessage,
        ops: MemoryOps,
    ) -> StoreResult<(Posted, Memory)>;
    /// A page of messages in `seq` order, under `filter.max_bytes` when given.
    async fn list_messages(
        &self,
        team_id: i64,
        filter: MessageFilter,
    ) -> StoreResult<BytePage<Message>>;
    /// A page of the messages `search` matches, newest first, and how many match in all.
    async fn search_messages(
        &self,
        team_id: i64,
        search: MessageSearch,
    ) -> StoreResult<(BytePage<Message>, i64)>;
    /// Each task's newest pass-rate report (a `test_result` or `impl_progress` whose
    /// `data.passRate` is a number) over the whole history, a page in `q`'s order, and how many
    /// of the team's tasks have one. One walk back along `messages_by_task` per task of the
    /// team: bounded by the team's tasks, not its messages.
    async fn task_progress(
        &self,
        team_id: i64,
        q: ProgressQuery,
    ) -> StoreResult<(Vec<Message>, i64)>;
    /// Messages to the caller, its role or `*`, past its inbox cursor: a page under
    /// `max_bytes`.
    async fn inbox(
        &self,
        caller: &Caller,
        limit: usize,
        max_bytes: usize,
    ) -> StoreResult<BytePage<Message>>;
    async fn ack_inbox(&self, caller: &Caller, seq: i64) -> StoreResult<i64>;

    // --- shared memory ---
    async fn get_memory(&self, team_id: i64) -> StoreResult<Memory>;
    async fn patch_memory(
        &self,
        caller: &Caller,
        patch: serde_json::Value,
        if_match: Option<i64>,
    ) -> StoreResult<Memory>;
    async fn replace_memory(
        &self,
        caller: &Caller,
        doc: serde_json::Value,
        if_match: Option<i64>,
    ) -> StoreResult<Memory>;
    /// Applies an RFC 6902 JSON Patch (a list of operations), all or none.
    async fn json_patch_memory(
        &self,
        caller: &Caller,
        ops: serde_json::Value,
        if_match: Option<i64>,
    ) -> StoreResult<Memory>;
    /// The changes before version `before` (all when `None`), newest first: a page under
    /// `max_bytes`.
    async fn memory_history(
        &self,
        team_id: i64,
        before: Option<i64>,
        limit: usize,
        max_bytes: usize,
    ) -> StoreResult<BytePage<MemoryChange>>;

    // --- test history ---
    /// Stores one run of a project's suite and deletes the project's runs past
    /// `[history] runs_per_project`, in one transaction. A run for a new project when the team
    /// has `[history] max_projects` already is refused.
    async fn record_test_run(
        &self,
        caller: &Caller,
        run: NewTestRun,
    ) -> StoreResult<TestRunSummary>;
    /// The team's projects with kept runs, the one posted to last first.
    async fn test_projects(&self, team_id: i64) -> StoreResult<Vec<String>>;
    /// A project's kept runs, oldest first, with their outcomes when `with_outcomes`.
    async fn test_runs(
        &self,
        team_id: i64,
        project: &str,
        with_outcomes: bool,
    ) -> StoreResult<Vec<StoredRun>>;

    // --- events ---
    async fn list_events(&self, team_id: i64, after: i64, limit: usize) -> StoreResult<Vec<Event>>;
    /// One task's `task.*` events, newest first, at most `limit` (the dashboard's timeline).
    /// Reads the team's event log without an index on the task: bounded by the log's retention.
    async fn task_events(
        &self,
        team_id: i64,
        task_id: &str,
        limit: usize,
    ) -> StoreResult<Vec<Event>>;
    /// The team's newest event and message `seq`: where a client that has just read a snapshot
    /// follows the streams from.
    async fn cursors(&self, team_id: i64) -> StoreResult<StreamCursors>;

    // --- health ---
    /// Checks the database answers (for `/readyz`).
    async fn ping(&self) -> StoreResult<()>;

    /// Checks the store can take writes now: a full disk or a read-only file system cannot,
    /// though reads still answer (for `/readyz`). Backends that cannot tell say yes.
    async fn writable(&self) -> StoreResult<()> {
        Ok(())
    }

    /// Marks `replica` alive now and answers how many replicas, itself included, were alive
    /// within `expiry` (by the database's clock), forgetting older marks (`replicas.rs`). A
    /// SQLite file serves one daemon: 1.
    async fn replica_heartbeat(
        &self,
        _replica: &str,
        _expiry: std::time::Duration,
    ) -> StoreResult<usize> {
        Ok(1)
    }

    /// Removes `replica`'s mark at once (a clean shutdown).
    async fn replica_left(&self, _replica: &str) -> StoreResult<()> {
        Ok(())
    }

    /// Whether the database is reachable now and when that changes, for a backend that can
    /// lose its database (PostgreSQL): requests are answered 503 at once while it is not.
    fn reachability(&self) -> Option<tokio::sync::watch::Receiver<bool>> {
        None
    }
    /// Flushes and closes; later calls fail with `Unavailable`.
    async fn close(&self);
    /// Where the data lives, for the start-up line (a file path, or a database URL without
    /// its password).
    fn describe(&self) -> String;
}
