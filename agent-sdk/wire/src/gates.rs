//! Human gates: a task held until a person answers a question or decides.

use crate::Task;
use serde::{Deserialize, Serialize};

/// What a gate asks for. `question` (the default, as before kinds existed): any answer releases
/// the task. `approval`: the answer must carry a `decision`, and `reject` cancels the task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum GateKind {
    #[default]
    Question,
    Approval,
}

impl GateKind {
    pub fn as_str(self) -> &'static str {
        match self {
            GateKind::Question => "question",
            GateKind::Approval => "approval",
        }
    }
}

/// A person's decision: `approve` releases the gated task, `reject` cancels it for good.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Approve,
    Reject,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Approve => "approve",
            Decision::Reject => "reject",
        }
    }
}

/// Where a gate's question stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum GateStatus {
    /// Waiting for a person.
    Open,
    /// Answered (approved, rejected or, for a question, any answer).
    Answered,
    /// No longer asked: the gated task was cancelled, or the question was asked again.
    Withdrawn,
}

/// `POST /v1/teams/{team}/tasks/{id}/gate`, and `gate` in `POST /v1/teams/{team}/tasks`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GateRequest {
    /// What the person must answer before a worker may claim the task (1–4,000 characters).
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 4000, pattern = "\\S")
    )]
    pub question: String,
    /// `question` (default: any answer releases) or `approval` (approve releases, reject
    /// cancels the task; an answer without a decision is refused).
    #[serde(default)]
    pub kind: GateKind,
    /// Only a person may decide: an agent whose role is `lead`. Any other token — every
    /// coordinator, and every MCP session that is not a lead's — is refused with 403
    /// `person_required`. Once a task has a person-only question, asking again keeps it so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub person_only: bool,
    /// When the decision is taken for the person if no one has decided (RFC 3339, in the
    /// future, at most a year ahead): `onDeadline` applies, as if answered.
    #[cfg_attr(feature = "openapi", schema(format = DateTime, example = "2026-12-01T17:00:00Z"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<String>,
    /// The decision the deadline takes (with `deadline` only; default `reject`: nothing goes
    /// ahead without a yes). A person-only gate takes only `reject`: only a person approves it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_deadline: Option<Decision>,
}

/// `POST /v1/teams/{team}/tasks/{id}/ask`: the holder of task `id` asks a person and waits. The
/// same fields as a gate; the deadline is at most the team's `questions.maxWaitMinutes` ahead,
/// and without one the question gets that wait as its deadline (default decision `reject`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AskRequest {
    /// What the person must answer before the holder goes on (1–4,000 characters).
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 4000, pattern = "\\S")
    )]
    pub question: String,
    /// `question` (default: any answer) or `approval` (the answer must carry a decision).
    /// Neither releases nor cancels the task: the holder reads the decision and goes on.
    #[serde(default)]
    pub kind: GateKind,
    /// Only a person (a `lead`) may decide.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub person_only: bool,
    /// When `onDeadline` is taken if no one decided (RFC 3339, at most the team's wait ahead;
    /// default: that wait from now).
    #[cfg_attr(feature = "openapi", schema(format = DateTime, example = "2026-12-01T17:00:00Z"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<String>,
    /// The decision the deadline takes (default `reject`; only `reject` when person-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_deadline: Option<Decision>,
    /// The lease the task gets back once the question is decided (ms; default: the daemon's
    /// default lease), so the holder has that long to heartbeat after waking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_ms: Option<u64>,
}

impl AskRequest {
    /// The question as a gate asks it.
    pub fn gate(&self) -> GateRequest {
        GateRequest {
            question: self.question.clone(),
            kind: self.kind,
            person_only: self.person_only,
            deadline: self.deadline.clone(),
            on_deadline: self.on_deadline,
        }
    }
}

/// The answer to a gate: the question (`HUMAN-NNN`, owned by `human`) and the gated task, now
/// blocked by it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Gated {
    pub question: Task,
    pub task: Task,
}

/// `POST /v1/teams/{team}/tasks/{id}/answer`: a `decision`, an `answer`, or both. A question
/// gate takes an answer alone (it releases the task); an approval gate needs a `decision`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnswerRequest {
    /// The person's words (1–4,000 characters); kept as the question's `result.answer`, and a
    /// rejected task's failure reason.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 4000, pattern = "\\S", nullable = false)
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// `approve` releases the task, `reject` cancels it (never claimable again).
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
}

/// One gate that held a task, as a claim and a task read show it (`gates`), so the worker
/// sees what a person decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct GateRecord {
    /// The question's id, `HUMAN-NNN`.
    pub id: String,
    pub question: String,
    pub kind: GateKind,
    /// Only a `lead` may decide it.
    pub person_only: bool,
    /// When `onDeadline` is taken if no one decided before (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_deadline: Option<Decision>,
    pub status: GateStatus,
    /// The holder that asked it mid-task (`POST …/tasks/{id}/ask`); absent for a gate asked
    /// before the task was claimed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_by_holder: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub decision: Option<Decision>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub answer: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub answered_by: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub answered_at: Option<String>,
}
