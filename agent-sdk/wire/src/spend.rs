//! What a team spends on models: the budget a coordinator or person sets, the ledger of calls
//! workers reserve and settle against it, and its totals.
//!
//! Costs are whole micro-units of the team's currency (`costMicros`: 1,000,000 = one dollar
//! when prices are in dollars), so sums are exact on every client.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The span a budget's limits count over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum BudgetPeriod {
    /// Everything the team ever spent.
    #[default]
    Total,
    /// What the team spent on the current day (UTC, the daemon's clock).
    Day,
}

/// A model's price, in micro-units per million tokens (3 dollars a million prompt tokens:
/// `promptPerMillion: 3000000`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelPrice {
    /// Micro-units per million prompt tokens.
    #[serde(default, deserialize_with = "crate::whole::required")]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 9007199254740992.0))]
    pub prompt_per_million: u64,
    /// Micro-units per million completion tokens.
    #[serde(default, deserialize_with = "crate::whole::required")]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 9007199254740992.0))]
    pub completion_per_million: u64,
}

/// `PUT /v1/teams/{team}/budget`: the team's budget, replaced whole. Every limit absent or
/// `null` is no limit; a budget without limits only prices the ledger.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BudgetSettings {
    /// What `maxTokens` and `maxCostMicros` count over.
    #[serde(default)]
    pub period: BudgetPeriod,
    /// Prompt and completion tokens the team may spend in the period.
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 9007199254740992.0))]
    pub max_tokens: Option<u64>,
    /// Cost (micro-units, priced by `prices`) the team may spend in the period.
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 9007199254740992.0))]
    pub max_cost_micros: Option<u64>,
    /// Tokens one task may spend, in all.
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 9007199254740992.0))]
    pub task_max_tokens: Option<u64>,
    /// Cost one task may spend, in all.
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 9007199254740992.0))]
    pub task_max_cost_micros: Option<u64>,
    /// The share of a team limit (1–100, default 80) at which the coordinators are warned.
    #[serde(
        default,
        deserialize_with = "crate::whole::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 100))]
    pub warn_percent: Option<u64>,
    /// Prices by model name (at most 64 models); a model not named costs nothing.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub prices: BTreeMap<String, ModelPrice>,
}

/// The most models a budget prices.
pub const MAX_PRICED_MODELS: usize = 64;

/// The default warning threshold, in percent of a team limit.
pub const DEFAULT_WARN_PERCENT: u64 = 80;

/// Calls, tokens and cost added up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SpendTotals {
    /// Calls reserved (a call refused by the budget is not counted).
    pub calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// `promptTokens + completionTokens`.
    pub tokens: u64,
    pub cost_micros: u64,
}

/// `GET`/`PUT /v1/teams/{team}/budget`: the budget, what the team spent in its period, and
/// whether a model call would be refused now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct BudgetView {
    /// Rises with every change (`ETag`; `If-Match` on `PUT`); 0 while none was ever set.
    pub version: i64,
    pub budget: BudgetSettings,
    /// The period's name: `total`, or the day (`2026-11-29`).
    pub period: String,
    /// What the team spent in the period.
    pub spent: SpendTotals,
    /// Tokens left in the period (absent: no token limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining_tokens: Option<u64>,
    /// Cost left in the period (absent: no cost limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining_cost_micros: Option<u64>,
    /// A team limit is reached: reservations are refused (`budget_exceeded`) and claims of
    /// model-calling tasks too, until the budget is raised or the day ends.
    pub exhausted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
}

/// `POST /v1/teams/{team}/spend/reserve`: ask the daemon for one model call before making it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReserveSpend {
    /// The model to be called (1–200 characters).
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 200, pattern = "\\S")
    )]
    pub model: String,
    /// The task the call is for (its per-task ceiling applies), `PREFIX-NNN`.
    #[cfg_attr(
        feature = "openapi",
        schema(pattern = "^[A-Z][A-Z0-9_]{0,31}-[0-9]{1,9}$", example = "TEST-001")
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
}

/// `POST /v1/teams/{team}/spend/{id}/settle`: the tokens the reserved call used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SettleSpend {
    #[serde(default, deserialize_with = "crate::whole::required")]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 4294967296_u64))]
    pub prompt_tokens: u64,
    #[serde(default, deserialize_with = "crate::whole::required")]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 4294967296_u64))]
    pub completion_tokens: u64,
}

/// One model call in the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SpendCall {
    /// The reservation's id: settle it with `POST …/spend/{id}/settle`.
    pub id: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    pub agent: String,
    pub model: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cost_micros: u64,
    /// The day (UTC) the call was reserved on.
    pub day: String,
    pub created_at: String,
    /// Whether its tokens were reported (a reservation counts no tokens until then).
    pub settled: bool,
}

/// One line of a spend report: what `key` (a task, agent, model or day) spent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SpendGroup {
    pub key: String,
    pub calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub tokens: u64,
    pub cost_micros: u64,
}

impl SpendGroup {
    /// The line of `key` with these totals.
    pub fn of(key: String, t: SpendTotals) -> SpendGroup {
        SpendGroup {
            key,
            calls: t.calls,
            prompt_tokens: t.prompt_tokens,
            completion_tokens: t.completion_tokens,
            tokens: t.tokens,
            cost_micros: t.cost_micros,
        }
    }
}

/// `GET /v1/teams/{team}/spend`: the team's totals, and by task, agent, model and day (each
/// the 100 largest by tokens, then by key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SpendReport {
    pub total: SpendTotals,
    pub by_task: Vec<SpendGroup>,
    pub by_agent: Vec<SpendGroup>,
    pub by_model: Vec<SpendGroup>,
    pub by_day: Vec<SpendGroup>,
}

/// The most lines of each group in a [`SpendReport`].
pub const MAX_SPEND_GROUPS: usize = 100;
