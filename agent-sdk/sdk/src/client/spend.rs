//! The team's model budget and its ledger (issue 51): read and set the budget, reserve a
//! model call before making it and settle it after, read what the team spent.

use super::transport::Call;
use super::{Client, Error};
use crate::wire::{BudgetSettings, BudgetView, ReserveSpend, SettleSpend, SpendCall, SpendReport};
use reqwest::Method;

impl Client {
    /// `GET …/budget`: the budget, the period's spending and whether calls are refused.
    pub async fn budget(&self) -> Result<BudgetView, Error> {
        self.json(Call::get(self.team_url(&["budget"])?)).await
    }

    /// `PUT …/budget` (coordinator, lead, admin): replaces the budget; with `if_match`, 412
    /// when its version moved on.
    pub async fn set_budget(
        &self,
        budget: &BudgetSettings,
        if_match: Option<i64>,
    ) -> Result<BudgetView, Error> {
        let mut call = Call::new(Method::PUT, self.team_url(&["budget"])?).json(budget)?;
        if let Some(version) = if_match {
            call = call.header("if-match", &version.to_string())?;
        }
        self.json(call).await
    }

    /// `POST …/spend/reserve`: one call of `model` for `task`, before it is made. 409
    /// `budget_exceeded` ([`Error::is_budget_exceeded`]) when the budget is spent.
    pub async fn reserve_spend(&self, model: &str, task: Option<&str>) -> Result<SpendCall, Error> {
        let body = ReserveSpend {
            model: model.to_string(),
            task: task.map(str::to_string),
        };
        self.json(Call::post(self.team_url(&["spend", "reserve"])?).json(&body)?)
            .await
    }

    /// `POST …/spend/{id}/settle`: the tokens the reserved call used.
    pub async fn settle_spend(
        &self,
        id: i64,
        prompt_tokens: u64,
        completion_tokens: u64,
    ) -> Result<SpendCall, Error> {
        let body = SettleSpend {
            prompt_tokens,
            completion_tokens,
        };
        let url = self.team_url(&["spend", &id.to_string(), "settle"])?;
        self.json(Call::post(url).json(&body)?).await
    }

    /// `GET …/spend`: totals, by task, agent, model and day (one task's, when given).
    pub async fn spend_report(&self, task: Option<&str>) -> Result<SpendReport, Error> {
        let call = Call::get(self.team_url(&["spend"])?).query("task", task);
        self.json(call).await
    }
}

impl Error {
    /// 409 `budget_exceeded`: the team's model budget (or the task's ceiling) is spent.
    pub fn is_budget_exceeded(&self) -> bool {
        self.code() == Some(crate::wire::codes::BUDGET_EXCEEDED)
    }
}
