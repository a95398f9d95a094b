//! The model budget and its ledger as tools (issue 51), each calling the HTTP area's function
//! (`http/spend.rs`, `http/budget.rs`), so a refusal reads the same over MCP as over REST.

use super::args::Args;
use super::tools::{run, Huddle, ToolResult};
use crate::http::authz::Action;
use crate::http::{budget, spend};
use axum::http::request::Parts;
use huddle_wire::{BudgetSettings, ReserveSpend, SettleSpend};
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

/// `spend_reserve`: one model call you are about to make.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReserveArgs {
    /// The model you will call (1–200 characters).
    #[schemars(length(min = 1, max = 200))]
    pub model: String,
    /// The task the call is for, e.g. `TEST-007` (its ceiling applies).
    #[serde(default)]
    pub task: Option<String>,
}

/// `spend_settle`: the tokens a reserved call used.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SettleArgs {
    /// The reservation's `id` (from `spend_reserve`).
    #[serde(deserialize_with = "huddle_wire::whole::required")]
    pub id: i64,
    /// Tokens of the prompt.
    #[serde(default, deserialize_with = "huddle_wire::whole::required")]
    pub prompt_tokens: u64,
    /// Tokens of the answer.
    #[serde(default, deserialize_with = "huddle_wire::whole::required")]
    pub completion_tokens: u64,
}

/// `spend_report`: the team's spending.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportArgs {
    /// Only this task's calls, e.g. `TEST-007`.
    #[serde(default)]
    pub task: Option<String>,
}

/// `budget_set`: the team's budget, replaced whole.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BudgetSetArgs {
    /// The new budget: `period` (`total` or `day`), `maxTokens`, `maxCostMicros`,
    /// `taskMaxTokens`, `taskMaxCostMicros`, `warnPercent`, `prices` by model.
    pub budget: BudgetSettings,
    /// The version you read (`budget_get`'s `version`): refused when it changed since.
    #[serde(default, deserialize_with = "huddle_wire::whole::option")]
    pub if_version: Option<i64>,
}

/// No arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

#[tool_router(router = spend_router, vis = "pub(super)")]
impl Huddle {
    #[tool(
        description = "Reserve one model call before you make it: answers the reservation \
        (settle it with spend_settle after the call), or the error `budget_exceeded` when \
        the team's model budget or the task's ceiling is spent — then make no call and \
        release the task with that reason.",
        annotations(
            title = "Reserve a model call",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn spend_reserve(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<ReserveArgs>>,
    ) -> ToolResult {
        run(
            &parts,
            Action::RecordSpend,
            args,
            |caller, a: ReserveArgs| async move {
                let call = ReserveSpend {
                    model: a.model,
                    task: a.task,
                };
                spend::reserve_call(&self.state, &caller, call).await
            },
        )
        .await
    }

    #[tool(
        description = "Record the tokens a call you reserved used (`id` from spend_reserve); \
        answers the call, priced by the team's budget.",
        annotations(
            title = "Settle a model call",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn spend_settle(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<SettleArgs>>,
    ) -> ToolResult {
        run(
            &parts,
            Action::RecordSpend,
            args,
            |caller, a: SettleArgs| async move {
                let tokens = SettleSpend {
                    prompt_tokens: a.prompt_tokens,
                    completion_tokens: a.completion_tokens,
                };
                spend::settle_call(&self.state, &caller, a.id, tokens).await
            },
        )
        .await
    }

    #[tool(
        description = "What the team spent on models: totals, and by task, agent, model and \
        day; `task` narrows it to one task's calls.",
        annotations(
            title = "Read spending",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn spend_report(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<ReportArgs>>,
    ) -> ToolResult {
        run(
            &parts,
            Action::ReadSpend,
            args,
            |caller, a: ReportArgs| async move {
                spend::spend_report(&self.state, caller.team_id, a.task).await
            },
        )
        .await
    }

    #[tool(
        description = "The team's model budget, what it spent in the budget's period, what is \
        left and whether model calls are refused now (`exhausted`).",
        annotations(
            title = "Read the budget",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn budget_get(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<NoArgs>>,
    ) -> ToolResult {
        run(
            &parts,
            Action::ReadSpend,
            args,
            |caller, _: NoArgs| async move { budget::budget_of(&self.state, caller.team_id).await },
        )
        .await
    }

    #[tool(
        description = "Set the team's model budget (replaced whole; limits left out: none). \
        Raising a spent budget lets refused work resume.",
        annotations(
            title = "Set the budget",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn budget_set(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<BudgetSetArgs>>,
    ) -> ToolResult {
        run(
            &parts,
            Action::ManageBudget,
            args,
            |caller, a: BudgetSetArgs| async move {
                budget::set_budget(
                    &self.state,
                    caller.team_id,
                    &caller.agent,
                    a.if_version,
                    a.budget,
                )
                .await
            },
        )
        .await
    }
}
