//! A team's settings (the admin's): quota and retention overrides of the daemon's defaults,
//! and what the team stores now.

use serde::{Deserialize, Serialize};

/// The largest quota or retention value: 2^53, so every client reads it exactly.
pub const MAX_SETTING: u64 = 1 << 53;

/// Per-team quotas. Absent or `null`: the daemon's `[limits]` default; `0`: no limit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TeamQuotas {
    /// Tasks stored (any status, until retention deletes them).
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 9007199254740992.0))]
    pub max_tasks: Option<u64>,
    /// Dependency (`blockedBy`) edges.
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 9007199254740992.0))]
    pub max_edges: Option<u64>,
    /// Messages stored.
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 9007199254740992.0))]
    pub max_messages: Option<u64>,
    /// Approximate bytes of the team's tasks, messages and shared memory document.
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 9007199254740992.0))]
    pub max_storage_bytes: Option<u64>,
}

/// Per-team retention. Absent or `null`: the daemon's `[retention]` default; `0`: keep all.
/// Ages in hours; counts are the newest kept.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TeamRetention {
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 9007199254740992.0))]
    pub finished_tasks_max_age_hours: Option<u64>,
    /// Finished tasks (completed, failed, cancelled) kept, the most recently updated.
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 9007199254740992.0))]
    pub finished_tasks_kept: Option<u64>,
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 9007199254740992.0))]
    pub messages_max_age_hours: Option<u64>,
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 9007199254740992.0))]
    pub messages_kept: Option<u64>,
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 9007199254740992.0))]
    pub events_max_age_hours: Option<u64>,
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 9007199254740992.0))]
    pub events_kept: Option<u64>,
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 9007199254740992.0))]
    pub test_runs_max_age_hours: Option<u64>,
    /// Test-history runs kept (all projects together), the newest.
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 9007199254740992.0))]
    pub test_runs_kept: Option<u64>,
}

/// `PUT /v1/teams/{team}/settings`: the team's overrides, replaced whole.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TeamSettings {
    #[serde(default)]
    pub quotas: TeamQuotas,
    #[serde(default)]
    pub retention: TeamRetention,
    #[serde(default)]
    pub questions: TeamQuestions,
}

/// How a team's workers ask a person mid-task (`POST …/tasks/{id}/ask`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TeamQuestions {
    /// The longest a holder waits on its question, its task kept (minutes, 1–10,080; absent or
    /// `null`: the daemon's `[tasks] max_question_wait_minutes`). A question without a
    /// deadline gets this one; past it, the question's default decision applies.
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 10080))]
    pub max_wait_minutes: Option<u64>,
    /// The built-in tester asks a person before it gives up under the gate (approve: it
    /// completes the task below the gate, with the decision in its report; reject or no
    /// decision in time: it fails the task as it would have).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ask_below_gate: bool,
}

/// The longest wait a team may set on its questions: a week.
pub const MAX_QUESTION_WAIT_MINUTES: u64 = 7 * 24 * 60;

/// What a team stores now (maintained counters, not counted per request).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TeamUsage {
    pub tasks: u64,
    pub edges: u64,
    pub messages: u64,
    pub storage_bytes: u64,
}

/// `GET`/`PUT /v1/teams/{team}/settings`: the overrides, the quotas in force (every field
/// present; `0` means none) and the current use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TeamSettingsView {
    pub quotas: TeamQuotas,
    pub retention: TeamRetention,
    pub questions: TeamQuestions,
    pub effective_quotas: TeamQuotas,
    pub usage: TeamUsage,
}
