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
