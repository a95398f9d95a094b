//! Store-level inputs and outputs that are not part of the wire protocol.

use huddle_wire::{Message, Role, TaskStatus};

/// Who is calling, as resolved from a bearer token. Every store method that changes something
/// takes the caller so that `from`, `claimedBy` and history entries come from identity, never
/// from request bodies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub team_id: i64,
    pub team: String,
    pub agent: String,
    pub role: Role,
}

/// Filters for listing tasks; `after` is the id of the last task of the previous page.
#[derive(Debug, Clone, Default)]
pub struct TaskFilter {
    pub status: Option<TaskStatus>,
    pub owner: Option<String>,
    pub prefix: Option<String>,
    /// Only pending tasks whose blockers are all completed.
    pub ready: bool,
    pub limit: usize,
    pub after: Option<String>,
    /// Only tasks whose current or last holder is this agent.
    pub claimed_by: Option<String>,
    /// The page's byte budget (`[limits] max_page_bytes`; a task's `result` may hold a diff);
    /// `None` for the daemon's own readers.
    pub max_bytes: Option<usize>,
}

/// Filters for listing messages; `after` is a message `seq`.
#[derive(Debug, Clone, Default)]
pub struct MessageFilter {
    pub after: i64,
    pub from: Option<String>,
    pub to: Option<String>,
    pub kind: Option<String>,
    pub limit: usize,
    /// The page's byte budget (`[limits] max_page_bytes`); `None` for the daemon's own
    /// readers, which page by count alone.
    pub max_bytes: Option<usize>,
}

/// A page read under a byte budget: its rows, and whether the budget ended it before the
/// limit or the last row (then another page follows, from the last row here).
#[derive(Debug, Clone, PartialEq)]
pub struct BytePage<T> {
    pub items: Vec<T>,
    pub cut: bool,
}

/// A message search: every filter given must match; newest first, before `before`.
#[derive(Debug, Clone, Default)]
pub struct MessageSearch {
    /// Words every match contains, as prefixes (`rules::search_words`); empty: any text.
    pub words: Vec<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    pub kind: Option<String>,
    /// The task a message is about: its `data.taskId` or `data.task`.
    pub task: Option<String>,
    /// Created at or after this time (milliseconds since the epoch).
    pub since_ms: Option<i64>,
    /// Created before this time.
    pub until_ms: Option<i64>,
    /// Only messages with a smaller `seq` (the `next` of the previous page).
    pub before: Option<i64>,
    pub limit: usize,
    /// The page's byte budget (`[limits] max_page_bytes`).
    pub max_bytes: Option<usize>,
}

/// The order of `Store::task_progress`: by the report's pass rate or by how recent it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressOrder {
    Rate,
    Recent,
}

/// A page of each task's newest pass-rate report (`Store::task_progress`).
#[derive(Debug, Clone)]
pub struct ProgressQuery {
    pub order: ProgressOrder,
    /// Lowest (or oldest) first; ties go by `seq` the same way.
    pub ascending: bool,
    /// Reports skipped before the page: the page's place in the order.
    pub offset: usize,
    pub limit: usize,
}

/// The newest `seq` of a team's event log and of its message bus.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamCursors {
    pub events: i64,
    pub messages: i64,
}

/// One page of a list plus the cursor for the next, `None` at the end.
#[derive(Debug, Clone)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next: Option<String>,
}

/// The result of posting a message: the stored message and whether it was a retry.
#[derive(Debug, Clone)]
pub struct Posted {
    pub message: Message,
    pub replayed: bool,
}

/// The change a message makes to the shared memory, computed from the document as it is inside
/// the message's own transaction (so it sees every change committed before it): an RFC 6902
/// JSON Patch. It may run more than once (a PostgreSQL batch retries a refused write alone).
pub type MemoryOps = std::sync::Arc<dyn Fn(&serde_json::Value) -> serde_json::Value + Send + Sync>;

/// One entry of the shared memory's bounded history (the wire type, returned as is).
pub use huddle_wire::history::MemoryChange;

/// A waiting claimer's claim, left for the store to serve ([`super::Store::park_claim`]).
pub struct ClaimToPark<'a> {
    pub prefixes: &'a [String],
    pub project: Option<&'a crate::hub::ProjectFilter>,
    pub lease_ms: u64,
    pub max: usize,
}

/// What to do with tasks claimed for a parked claimer that no longer listens (release them).
pub type Undelivered = Box<dyn FnOnce(Vec<huddle_wire::Task>) + Send>;

/// The answer to a parked claim: the tasks claimed, once durable; none when the write that
/// claimed them failed (look again).
pub type HandedOver =
    tokio::sync::oneshot::Receiver<super::error::StoreResult<Vec<huddle_wire::Task>>>;
