use serde::{Deserialize, Serialize};

/// Message types with a documented `data` shape. Any other type matching
/// `[a-z][a-z0-9_]{0,63}` is accepted too.
pub const KNOWN_MESSAGE_TYPES: [&str; 4] =
    ["test_result", "impl_progress", "fix_required", "error"];

/// Recipient meaning "everyone in the team".
pub const BROADCAST: &str = "*";

/// `POST /v1/teams/{team}/messages`. The sender is the caller's identity, never the body.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PostMessage {
    /// An agent name, a role, or `*`.
    #[cfg_attr(feature = "openapi", schema(example = "*"))]
    pub to: String,
    #[cfg_attr(
        feature = "openapi",
        schema(pattern = "^[a-z][a-z0-9_]{0,63}$", example = "test_result")
    )]
    #[serde(rename = "type")]
    pub kind: String,
    #[cfg_attr(feature = "openapi", schema(pattern = "\\S"))]
    pub summary: String,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    #[serde(default)]
    pub data: serde_json::Value,
}

/// `POST /v1/teams/{team}/messages/batch`: several messages in one request, stored all or none,
/// in order, with consecutive `seq`s.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PostMessages {
    pub messages: Vec<BatchMessage>,
}

/// One message of a batched post: [`PostMessage`] plus its own optional idempotency key.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BatchMessage {
    /// An agent name, a role, or `*`.
    #[cfg_attr(feature = "openapi", schema(example = "*"))]
    pub to: String,
    /// The kind of message: `test_result`, `impl_progress`, `fix_required`, `error`, or another
    /// lowercase word (`[a-z][a-z0-9_]*`).
    #[cfg_attr(
        feature = "openapi",
        schema(pattern = "^[a-z][a-z0-9_]{0,63}$", example = "test_result")
    )]
    #[serde(rename = "type")]
    pub kind: String,
    /// One line for people watching the team.
    #[cfg_attr(feature = "openapi", schema(pattern = "\\S"))]
    pub summary: String,
    /// Any JSON the recipients read (for `test_result`: passRate, total, passed, failed, …).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    #[serde(default)]
    pub data: serde_json::Value,
    /// 1–255 visible ASCII characters, like the `Idempotency-Key` header of a single post: a
    /// message whose key the caller used before is answered with the stored one, not stored again.
    #[cfg_attr(feature = "openapi", schema(pattern = "^[!-~]{1,255}$"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
}

impl BatchMessage {
    /// The message without its key.
    pub fn into_parts(self) -> (PostMessage, Option<String>) {
        let post = PostMessage {
            to: self.to,
            kind: self.kind,
            summary: self.summary,
            data: self.data,
        };
        (post, self.idempotency_key)
    }
}

/// The answer to a batched post: the stored messages in request order.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PostedMessages {
    pub messages: Vec<Message>,
    /// Positions (0-based) of the messages whose idempotency key had been used before: those
    /// are the stored originals and nothing new was stored for them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replayed: Vec<usize>,
}

/// A stored message. `seq` is per team, monotonic, and the cursor for lists, inboxes and streams.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub seq: i64,
    pub id: String,
    pub from: String,
    pub to: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub summary: String,
    pub data: serde_json::Value,
    pub created_at: String,
}

/// A page of a message search, newest first: `total` counts every message the filters match
/// (not only this page); `next` is the `before` cursor of the following page, absent at the end.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MessageSearchPage {
    pub messages: Vec<Message>,
    pub total: i64,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    #[serde(default)]
    pub next: Option<i64>,
}

/// Each task's newest pass-rate report over the whole history (`GET …/progress`): one message per
/// task, its newest `test_result` or `impl_progress` whose `data.passRate` is a number, in the
/// order asked for; `total` counts the tasks that have one; `next` is the `offset` of the
/// following page, absent at the end.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TaskProgressPage {
    pub messages: Vec<Message>,
    pub total: i64,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    #[serde(default)]
    pub next: Option<i64>,
}

/// A page of messages; `next` is the `after` cursor for the following page, absent at the end.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MessageList {
    pub messages: Vec<Message>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    #[serde(default)]
    pub next: Option<i64>,
}

/// `POST /v1/teams/{team}/inbox/ack`: everything up to and including `seq` has been handled.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InboxAck {
    /// The `seq` of the last message handled; it and everything before it leave the inbox.
    #[cfg_attr(feature = "openapi", schema(minimum = 0))]
    #[serde(deserialize_with = "crate::whole::required")]
    pub seq: i64,
}

/// `GET …/cursors`: the newest `seq` of the team's event log and message bus. A client reads
/// these first, then its snapshot (tasks, a page of messages), then follows `/events` and
/// `/messages/stream` after them: nothing is missed and nothing is replayed from the start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Cursors {
    pub events: i64,
    pub messages: i64,
}

/// The caller's inbox cursor after an ack.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct InboxCursor {
    pub cursor: i64,
}

/// One change in a team, as carried by `/events`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub seq: i64,
    /// `task.created`, `task.updated`, `task.claimed`, `message.posted`, `memory.updated`, …
    #[serde(rename = "type")]
    pub kind: String,
    pub data: serde_json::Value,
    pub created_at: String,
}

/// `GET /v1/teams/{team}/tasks/{id}/events`: one task's changes (`task.*` events carrying the
/// task as it became), newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TaskEvents {
    pub events: Vec<Event>,
}
