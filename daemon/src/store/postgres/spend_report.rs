//! The spend report on PostgreSQL: the ledger summed by task, agent, model and day, in one
//! transaction (`store::spend`).

use super::super::error::StoreResult;
use super::db::PoolTx;
use super::spend::{totals_at, SUMS};
use huddle_wire::{SpendGroup, SpendReport, MAX_SPEND_GROUPS};
use sqlx::Row;

/// The team's totals (of one task's calls, when given), by task, agent, model and day.
pub(super) async fn report(
    tx: &mut PoolTx,
    team_id: i64,
    task: Option<&str>,
) -> StoreResult<SpendReport> {
    let total = sqlx::query(&format!(
        "select {SUMS} from spend_calls where team_id = $1 and ($2::text is null or task_id = $2)"
    ))
    .bind(team_id)
    .bind(task)
    .fetch_one(tx.db())
    .await?;
    Ok(SpendReport {
        total: totals_at(&total, 0)?,
        by_task: groups(tx, team_id, task, "task_id").await?,
        by_agent: groups(tx, team_id, task, "agent").await?,
        by_model: groups(tx, team_id, task, "model").await?,
        by_day: groups(tx, team_id, task, "day").await?,
    })
}

async fn groups(
    tx: &mut PoolTx,
    team_id: i64,
    task: Option<&str>,
    key: &str,
) -> StoreResult<Vec<SpendGroup>> {
    let rows = sqlx::query(&format!(
        "select {key}, {SUMS} from spend_calls
         where team_id = $1 and ($2::text is null or task_id = $2) and {key} is not null
         group by {key}
         order by coalesce(sum(prompt_tokens), 0) + coalesce(sum(completion_tokens), 0) desc,
                  {key} collate \"C\"
         limit {MAX_SPEND_GROUPS}"
    ))
    .bind(team_id)
    .bind(task)
    .fetch_all(tx.db())
    .await?;
    rows.iter()
        .map(|r| Ok(SpendGroup::of(r.try_get(0)?, totals_at(r, 1)?)))
        .collect()
}
