//! `GET /v1/teams/{team}/tasks/{id}/why-not-ready`: why a claim would not take a task now.

use crate::TaskStatus;
use serde::{Deserialize, Serialize};

/// What keeps a task from being claimed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum NotReadyKind {
    /// The task is not pending (in progress, completed, failed or cancelled).
    Status,
    /// `blockedBy` tasks that are not completed.
    BlockedBy,
    /// Questions for a person (`HUMAN-…` blockers) not answered yet.
    Gate,
    /// Its metadata `scope` overlaps the scope of a task in progress.
    Scope,
}

/// One reason a task is not handed to a claim. The answer is a list of these, empty when a
/// claim (by an agent the task's `owner` admits) could take the task now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct NotReadyReason {
    pub kind: NotReadyKind,
    /// The reason in a sentence.
    pub message: String,
    /// The tasks waited for: the unfinished blockers, the open questions, or the task in
    /// progress whose scope overlaps (`scope`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<String>,
    /// With `status`: the task's status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TaskStatus>,
    /// With `scope` (and `status` in progress): the agent holding the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder: Option<String>,
    /// With `scope`: this task's glob that overlaps…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glob: Option<String>,
    /// …this glob of the task in progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_glob: Option<String>,
}

impl NotReadyReason {
    /// A reason of `kind` with only its message.
    pub fn new(kind: NotReadyKind, message: impl Into<String>) -> NotReadyReason {
        NotReadyReason {
            kind,
            message: message.into(),
            tasks: Vec::new(),
            status: None,
            holder: None,
            glob: None,
            held_glob: None,
        }
    }
}

/// The answer of `why-not-ready`: the task and its reasons, empty when a claim could take it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct WhyNotReady {
    pub id: String,
    pub reasons: Vec<NotReadyReason>,
}
