//! Outbound webhooks: what a coordinator registers, and the log of what was sent.

use serde::{Deserialize, Serialize};

/// What a webhook is sent for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum WebhookTrigger {
    /// A `fix_required` message: a worker needs a person or another role.
    FixRequired,
    /// A task moved to `failed`.
    TaskFailed,
    /// A `test_result` whose quality gate was not met.
    GateMissed,
    /// A question for a person (a human gate) was asked.
    NeedsHuman,
    /// A person rejected a gated task, which is cancelled (the `gate_rejected` message).
    GateRejected,
    /// The team's model spending passed the budget's warning threshold (`budget_warning`).
    BudgetWarning,
    /// The team's model budget is spent (`budget_exceeded`): model calls are refused.
    BudgetExceeded,
}

impl WebhookTrigger {
    pub const ALL: [WebhookTrigger; 7] = [
        WebhookTrigger::FixRequired,
        WebhookTrigger::TaskFailed,
        WebhookTrigger::GateMissed,
        WebhookTrigger::NeedsHuman,
        WebhookTrigger::GateRejected,
        WebhookTrigger::BudgetWarning,
        WebhookTrigger::BudgetExceeded,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            WebhookTrigger::FixRequired => "fix_required",
            WebhookTrigger::TaskFailed => "task_failed",
            WebhookTrigger::GateMissed => "gate_missed",
            WebhookTrigger::NeedsHuman => "needs_human",
            WebhookTrigger::GateRejected => "gate_rejected",
            WebhookTrigger::BudgetWarning => "budget_warning",
            WebhookTrigger::BudgetExceeded => "budget_exceeded",
        }
    }
}

impl std::str::FromStr for WebhookTrigger {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| format!("unknown webhook trigger {s:?}"))
    }
}

/// `POST /v1/teams/{team}/webhooks`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewWebhook {
    /// Where to `POST`: an `http` or `https` URL. Any address that is not public (loopback,
    /// private, link-local, and the other special-purpose ranges, also inside IPv6) is refused
    /// unless the daemon's `[webhooks] allow_private` is on.
    pub url: String,
    /// What it is sent for (at least one).
    #[cfg_attr(feature = "openapi", schema(min_items = 1))]
    pub events: Vec<WebhookTrigger>,
}

/// A registered webhook. `secret` (the HMAC key of its signatures) is shown only in the answer
/// to its creation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Webhook {
    pub id: i64,
    pub url: String,
    pub events: Vec<WebhookTrigger>,
    pub created_by: String,
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

/// `GET /v1/teams/{team}/webhooks`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WebhookList {
    pub webhooks: Vec<Webhook>,
}

/// One notification and how its sending ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WebhookDelivery {
    pub id: i64,
    pub webhook_id: i64,
    pub trigger: WebhookTrigger,
    /// The message or event `seq` it was sent for.
    pub seq: i64,
    /// The task it is about, when there is one.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub task_id: Option<String>,
    /// `delivered` (a 2xx answer) or `failed` (every attempt refused or unanswered).
    pub status: String,
    pub attempts: u32,
    /// The last answer's HTTP status, when there was an answer.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub http_status: Option<u16>,
    /// Why the last attempt failed.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub error: Option<String>,
    pub at: String,
}

/// `GET /v1/teams/{team}/webhooks/deliveries`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WebhookDeliveryList {
    pub deliveries: Vec<WebhookDelivery>,
}
