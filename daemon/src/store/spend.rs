//! Model spending (issue 51): a team's budget, the ledger of model calls, and its totals.
//! Workers *reserve* a call before making it and *settle* it with the tokens it used; the
//! store decides a reservation atomically against the budget (SQLite: in one writer job;
//! PostgreSQL: under the budget row's lock), by the shared rules of [`super::rules::spend`].

use super::error::StoreResult;
use super::rules::spend::{Reserved, Settled};
use super::types::Caller;
use async_trait::async_trait;
use huddle_wire::{
    BudgetSettings, BudgetView, ReserveSpend, SettleSpend, SpendReport, SpendTotals,
};

#[async_trait]
pub trait SpendStore {
    /// The team's budget (version 0 and no limits while none was set) and its period's
    /// spending.
    async fn budget(&self, team_id: i64) -> StoreResult<BudgetView>;
    /// Replaces the team's budget when `if_match` is absent or its current version (a stale
    /// one: `StaleVersion`); `by` is who set it.
    async fn set_budget(
        &self,
        team_id: i64,
        by: &str,
        if_match: Option<i64>,
        budget: BudgetSettings,
    ) -> StoreResult<BudgetView>;
    /// Records a call `caller` is about to make, unless the budget is spent.
    async fn reserve_spend(&self, caller: &Caller, call: ReserveSpend) -> StoreResult<Reserved>;
    /// Records the tokens of the caller's reserved call `id` (priced by the budget now).
    async fn settle_spend(
        &self,
        caller: &Caller,
        id: i64,
        tokens: SettleSpend,
    ) -> StoreResult<Settled>;
    /// The team's totals (of one task's calls, when given), by task, agent, model and day.
    async fn spend_report(&self, team_id: i64, task: Option<String>) -> StoreResult<SpendReport>;
    /// Whether a team limit is reached now (false for a team without a budget).
    async fn budget_exhausted(&self, team_id: i64) -> StoreResult<bool>;
    /// Every team's spending in all, by team name (for `/metrics`: one row per team and day
    /// summed, never the ledger); teams that never reserved a call are left out.
    async fn spend_by_team(&self) -> StoreResult<Vec<(String, SpendTotals)>>;
}
