//! Filters for list and stream calls; every field is optional and absent means "any".

use crate::wire::TaskStatus;

/// Filters for [`crate::Client::list_tasks`] (`GET …/tasks`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskQuery {
    /// Only tasks in this status.
    pub status: Option<TaskStatus>,
    /// Only tasks owned by this agent name or role.
    pub owner: Option<String>,
    /// Only tasks whose id starts with this prefix (`TEST`).
    pub prefix: Option<String>,
    /// Only pending tasks whose blockers are all completed (what a worker could claim now).
    pub ready: bool,
    /// Page size (the daemon allows 1–1000; 100 when absent).
    pub limit: Option<usize>,
    /// Continue after this task id (the previous page's `next`).
    pub after: Option<String>,
}

/// A message search for [`crate::Client::search_messages`] (`GET …/messages/search`): every
/// filter given must match; the answer is newest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MessageSearch {
    /// Words each message contains, as word starts, in any order (`TEST-00 average`).
    pub text: Option<String>,
    /// Only messages from this agent.
    pub from: Option<String>,
    /// Only messages addressed to this agent name, role or `*`.
    pub to: Option<String>,
    /// Only messages of this type.
    pub kind: Option<String>,
    /// Only messages about this task (`data.taskId` or `data.task`).
    pub task: Option<String>,
    /// Only messages created at or after this RFC 3339 time.
    pub since: Option<String>,
    /// Only messages created before this RFC 3339 time.
    pub until: Option<String>,
    /// Only messages older than this `seq` (the previous page's `next`).
    pub before: Option<i64>,
    /// Page size (the daemon allows 1–1000; 100 when absent).
    pub limit: Option<usize>,
}

/// Filters for [`crate::Client::list_messages`] (`GET …/messages`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MessageQuery {
    /// Only messages with a `seq` greater than this (the previous page's `next`).
    pub after: Option<i64>,
    /// Only messages from this agent.
    pub from: Option<String>,
    /// Only messages addressed to this agent name, role or `*`.
    pub to: Option<String>,
    /// Only messages of this type (`test_result`…).
    pub kind: Option<String>,
    /// Page size (the daemon allows 1–1000; 100 when absent).
    pub limit: Option<usize>,
}

/// Where a stream starts and what it carries, for [`crate::Client::stream_messages`] and
/// [`crate::Client::stream_events`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamOptions {
    /// Start after this sequence number; `None` replays everything from the beginning.
    pub after: Option<i64>,
    /// Messages only: only those from this agent.
    pub from: Option<String>,
    /// Messages only: only those addressed to this agent name, role or `*`.
    pub to: Option<String>,
    /// A message type, or an event type; for events `task.` (or `task.*`) matches a family.
    pub kind: Option<String>,
    /// Reconnect when nothing at all, not even the daemon's keep-alive comment, arrived for
    /// this long; `None` means 45 s (three of the daemon's default 15 s keep-alives).
    pub idle_timeout: Option<std::time::Duration>,
}
