use serde::{Deserialize, Serialize};
use std::fmt;

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Pending,
    InProgress,
    Completed,
    Failed,
    Cancelled,
}

impl TaskStatus {
    pub const ALL: [TaskStatus; 5] = [
        TaskStatus::Pending,
        TaskStatus::InProgress,
        TaskStatus::Completed,
        TaskStatus::Failed,
        TaskStatus::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::InProgress => "in_progress",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        TaskStatus::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One task to create: give `id` (`TEST-007`) or only `prefix` (`TEST`) to get the next number.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewTask {
    /// The task's id, `PREFIX-NNN` (`TEST-007`); give it or `prefix`, not both.
    #[cfg_attr(
        feature = "openapi",
        schema(pattern = "^[A-Z][A-Z0-9_]{0,31}-[0-9]{1,9}$", example = "TEST-007")
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Only the id prefix (`TEST`): the next free number is given.
    #[cfg_attr(
        feature = "openapi",
        schema(pattern = "^[A-Z][A-Z0-9_]{0,31}-?$", example = "TEST")
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// What to do, in one line.
    #[cfg_attr(feature = "openapi", schema(pattern = "\\S"))]
    pub subject: String,
    /// The details: what to test, where, what counts as done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A present-tense label shown while the task runs ("Running the auth suite").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_form: Option<String>,
    /// An agent name or a role; only that agent (or role) may claim it.
    #[cfg_attr(feature = "openapi", schema(pattern = "^$|^[a-z0-9][a-z0-9_-]{0,62}$"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Ids of tasks that must be completed before this one can be claimed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked_by: Vec<String>,
    /// Free-form JSON for the workers (framework, scope, cycle settings, …).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<serde_json::Value>,
    /// How many attempts (failed or lapsed) the task gets before it is failed for good (3 by default).
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 1000))]
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_attempts: Option<i64>,
    /// Ask a person first: the task is created with this question (`HUMAN-NNN`) among its
    /// blockers in the same transaction, so no waiting worker can claim it before the gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<crate::GateRequest>,
}

/// `POST /v1/teams/{team}/tasks` takes one task or an array (created all or none).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum NewTasks {
    Many(Vec<NewTask>),
    One(Box<NewTask>),
}

/// A task as the daemon returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Task {
    pub id: String,
    pub subject: String,
    pub description: String,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub active_form: Option<String>,
    pub status: TaskStatus,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub owner: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub claimed_by: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub lease_expires_at: Option<String>,
    pub attempts: i64,
    pub max_attempts: i64,
    pub blocked_by: Vec<String>,
    pub blocks: Vec<String>,
    pub metadata: serde_json::Value,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub result: Option<serde_json::Value>,
    /// Why the task failed (from `/fail` or from running out of lease attempts).
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub failure_reason: Option<String>,
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
    /// The people's questions that held this task and what they decided (`HUMAN-NNN`), on a
    /// claim and a task read; absent elsewhere and when the task was never gated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gates: Vec<crate::GateRecord>,
    /// The attempt's W3C trace context (`00-<trace id>-<span id>-01`), in a claim's answer
    /// only: the claimant records its spans under it and sends it as the `traceparent` header
    /// of its requests, so one attempt is one trace (docs/telemetry.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
}

/// A page of tasks; `next` is the `after` cursor for the following page, absent at the end.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TaskList {
    pub tasks: Vec<Task>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    #[serde(default)]
    pub next: Option<String>,
}

/// `PATCH /v1/teams/{team}/tasks/{id}`; absent fields are left alone, `metadata` is merged.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskPatch {
    /// A new one-line subject.
    #[cfg_attr(feature = "openapi", schema(pattern = "\\S"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// A new description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A new present-tense label shown while the task runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_form: Option<String>,
    /// Set the status by hand: `pending` (back to the queue), `completed`, `failed` or
    /// `cancelled`; `in_progress` comes only from a claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TaskStatus>,
    /// Who the task is for: an agent name or a role; `null` clears it (anyone may claim).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    #[cfg_attr(feature = "schemars", schemars(with = "Option<String>"))]
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    pub owner: Option<Option<String>>,
    /// Ids of tasks that must now be completed first (refused if that would close a cycle).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub add_blocked_by: Vec<String>,
    /// Ids of tasks this one no longer waits for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_blocked_by: Vec<String>,
    /// JSON merged into the task's metadata (objects merge, `null` deletes a key).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<serde_json::Value>,
    /// Complete the task although its blockers are not completed (refused otherwise, with
    /// the code `blocked`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub force: bool,
}

/// `POST /v1/teams/{team}/tasks/claim`
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClaimRequest {
    /// Id prefixes to take (`TEST`, `TEST-`); the role's defaults when absent.
    #[cfg_attr(feature = "openapi", schema(max_items = 32, example = json!(["TEST"])))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefixes: Option<Vec<String>>,
    /// Wait up to this long for a task to become ready (long poll), in milliseconds.
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub wait_ms: Option<u64>,
    /// How long the claim holds before it lapses, in milliseconds; renew it with a heartbeat.
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub lease_ms: Option<u64>,
    /// Claim up to this many tasks at once (1–100). When given, the answer is
    /// `{"tasks": [...]}` instead of a single task.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 100))]
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub max: Option<u32>,
    /// Take only tasks of this project (metadata `project`, a string of 1–200 characters)
    /// and tasks that name no project; with `strictProject`, only this project's tasks.
    /// Absent: tasks of any project.
    #[cfg_attr(
        feature = "openapi",
        schema(max_length = 200, example = "github.com/org/calc")
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// With `project`: leave tasks that name no project to others.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strict_project: bool,
    /// The model the worker calls on what it claims (1–200 characters). Declaring one makes
    /// its `TEST` and `QARUN` tasks model-calling: while the team's budget is spent they are
    /// not taken, and a claim left with nothing else to take is refused (409
    /// `budget_exceeded`), the tasks staying ready.
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 200))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// The answer to a claim that set `max`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ClaimedTasks {
    pub tasks: Vec<Task>,
}

/// `POST …/tasks/{id}/heartbeat`
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Heartbeat {
    /// The new lease, counted from now, in milliseconds (the default lease when absent).
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub lease_ms: Option<u64>,
    /// Where the holder works on the task (its worktree and fix branch), shown on
    /// `/metrics` while the lease holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<WorkspaceNote>,
}

/// A worker's workspace for a task it holds, as its heartbeats report it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkspaceNote {
    /// The directory the task works in (a git worktree, or the checkout).
    #[cfg_attr(feature = "openapi", schema(max_length = 1024, pattern = "\\S"))]
    pub path: String,
    /// The branch a fix goes to.
    #[cfg_attr(feature = "openapi", schema(max_length = 255, pattern = "\\S"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The commit the workspace started from.
    #[cfg_attr(feature = "openapi", schema(max_length = 64, pattern = "\\S"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
}

/// `POST …/tasks/{id}/complete`
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompleteTask {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
}

/// `POST …/tasks/complete`: complete several held tasks in one request (all or none).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompleteTasks {
    pub tasks: Vec<CompleteItem>,
}

/// One task of a batched completion.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompleteItem {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
}

/// `POST …/tasks/{id}/fail`: with attempts left and `final` not set, the task goes back to
/// `pending` for another try (the attempt counts and the reason is kept); with `final: true`, or
/// on its last attempt, it becomes `failed`. Dependents react only to that final state.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FailTask {
    /// Why the attempt failed, in plain words; kept on the task as `failureReason`.
    #[cfg_attr(feature = "openapi", schema(pattern = "\\S"))]
    pub reason: String,
    /// `true`: no retry, the task becomes `failed` now. Absent or `false`: retried while
    /// attempts remain.
    #[serde(default, rename = "final", skip_serializing_if = "std::ops::Not::not")]
    pub final_: bool,
    /// What the attempt produced (any JSON, e.g. a tester's verdict evidence), kept as the
    /// task's `result` so a failed task shows what was run and changed. Absent: the task's
    /// `result` is left as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
}

/// `POST …/tasks/{id}/release`: give a held task back without counting an attempt.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReleaseTask {
    /// Why it is given back (optional): posted to the coordinators as a `task_released` message
    /// (`data`: `{"task": id, "note": …}`), so the next holder and the humans can read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Distinguishes an absent field (`None`) from an explicit `null` (`Some(None)`).
mod double_option {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<Option<String>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(inner) => inner.serialize(s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Option<String>>, D::Error> {
        Option::<String>::deserialize(d).map(Some)
    }
}
