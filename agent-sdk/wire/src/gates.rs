//! Human gates: a task held until a person answers a question.

use crate::Task;
use serde::{Deserialize, Serialize};

/// `POST /v1/teams/{team}/tasks/{id}/gate`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GateRequest {
    /// What the person must answer before a worker may claim the task (1–4,000 characters).
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 4000, pattern = "\\S")
    )]
    pub question: String,
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

/// `POST /v1/teams/{team}/tasks/{id}/answer`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnswerRequest {
    /// The person's answer (1–4,000 characters); kept as the question's `result.answer`.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 4000, pattern = "\\S")
    )]
    pub answer: String,
}
