//! Model spending on PostgreSQL (`store::spend`): a reservation runs in one transaction that
//! first locks the team's budget row (`for update`), so reservations of a team with a budget
//! are judged one after another across every replica, each seeing the calls settled before
//! it; a team without a budget takes no lock. Times and days are the database's clock.

use super::super::error::StoreResult;
use super::super::rules::spend::{self as rules, BudgetNotice, Reserved, Settled, StoredBudget};
use super::super::rules::{check_version, fmt_time};
use super::super::spend::SpendStore;
use super::super::types::Caller;
use super::db::PoolTx;
use super::{PostgresStore, DB_NOW_MS};
use async_trait::async_trait;
use huddle_wire::{
    BudgetPeriod, BudgetSettings, BudgetView, ReserveSpend, SettleSpend, SpendCall, SpendReport,
    SpendTotals,
};
use sqlx::postgres::PgRow;
use sqlx::Row;

pub(super) const CALL: &str =
    "id, task_id, agent, model, prompt_tokens, completion_tokens, cost_micros, day,
                    created_at, settled_at";
pub(super) const SUMS: &str = "count(*)::bigint, coalesce(sum(prompt_tokens), 0)::bigint,
                    coalesce(sum(completion_tokens), 0)::bigint,
                    coalesce(sum(cost_micros), 0)::bigint";
const DAY_SUMS: &str = "coalesce(sum(calls), 0)::bigint, coalesce(sum(prompt_tokens), 0)::bigint,
                        coalesce(sum(completion_tokens), 0)::bigint,
                        coalesce(sum(cost_micros), 0)::bigint";

pub(super) fn call_at(r: &PgRow) -> sqlx::Result<SpendCall> {
    let n = |i: usize| -> sqlx::Result<u64> { Ok(r.try_get::<i64, _>(i)?.max(0) as u64) };
    Ok(SpendCall {
        id: r.try_get(0)?,
        task: r.try_get(1)?,
        agent: r.try_get(2)?,
        model: r.try_get(3)?,
        prompt_tokens: n(4)?,
        completion_tokens: n(5)?,
        cost_micros: n(6)?,
        day: r.try_get(7)?,
        created_at: fmt_time(r.try_get(8)?),
        settled: r.try_get::<Option<i64>, _>(9)?.is_some(),
    })
}

pub(super) fn totals_at(r: &PgRow, i: usize) -> sqlx::Result<SpendTotals> {
    Ok(rules::totals(
        r.try_get(i)?,
        r.try_get(i + 1)?,
        r.try_get(i + 2)?,
        r.try_get(i + 3)?,
    ))
}

pub(super) async fn now_ms(tx: &mut PoolTx) -> StoreResult<i64> {
    Ok(sqlx::query_scalar(&format!("select {DB_NOW_MS}"))
        .fetch_one(tx.db())
        .await?)
}

/// The team's budget; `lock` holds its row to the commit.
pub(super) async fn load_budget(
    tx: &mut PoolTx,
    team_id: i64,
    lock: bool,
) -> StoreResult<Option<StoredBudget>> {
    let row = sqlx::query(&format!(
        "select version, settings, updated_by, updated_at, warned, exhausted
         from spend_budgets where team_id = $1{}",
        if lock { " for update" } else { "" }
    ))
    .bind(team_id)
    .fetch_optional(tx.db())
    .await?;
    row.map(|r| -> StoreResult<StoredBudget> {
        Ok(StoredBudget {
            version: r.try_get(0)?,
            settings: rules::settings_from_text(&r.try_get::<String, _>(1)?)?,
            updated_by: r.try_get(2)?,
            updated_at: r.try_get(3)?,
            warned: r.try_get(4)?,
            exhausted: r.try_get(5)?,
        })
    })
    .transpose()
}

pub(super) async fn period_spent(
    tx: &mut PoolTx,
    team_id: i64,
    b: &BudgetSettings,
    today: &str,
) -> StoreResult<SpendTotals> {
    let row = match b.period {
        BudgetPeriod::Day => {
            sqlx::query(&format!(
                "select {DAY_SUMS} from spend_days where team_id = $1 and day = $2"
            ))
            .bind(team_id)
            .bind(today)
            .fetch_one(tx.db())
            .await?
        }
        BudgetPeriod::Total => {
            sqlx::query(&format!(
                "select {DAY_SUMS} from spend_days where team_id = $1"
            ))
            .bind(team_id)
            .fetch_one(tx.db())
            .await?
        }
    };
    Ok(totals_at(&row, 0)?)
}

pub(super) async fn task_spent(
    tx: &mut PoolTx,
    team_id: i64,
    task: &str,
) -> StoreResult<SpendTotals> {
    let row = sqlx::query(&format!(
        "select {SUMS} from spend_calls where team_id = $1 and task_id = $2"
    ))
    .bind(team_id)
    .bind(task)
    .fetch_one(tx.db())
    .await?;
    Ok(totals_at(&row, 0)?)
}

async fn budget_view(tx: &mut PoolTx, team_id: i64, now: i64) -> StoreResult<BudgetView> {
    let stored = load_budget(tx, team_id, false).await?;
    let today = rules::day_of(now);
    let settings = stored
        .as_ref()
        .map(|s| s.settings.clone())
        .unwrap_or_default();
    let period = rules::period_of(&settings, &today);
    let spent = period_spent(tx, team_id, &settings, &today).await?;
    Ok(rules::view(stored.as_ref(), &period, spent))
}

pub(super) async fn mark_notice(
    tx: &mut PoolTx,
    team_id: i64,
    notice: &BudgetNotice,
    version: i64,
) -> StoreResult<()> {
    let column = match notice.kind {
        rules::NoticeKind::Warning => "warned",
        rules::NoticeKind::Exhausted => "exhausted",
    };
    sqlx::query(&format!(
        "update spend_budgets set {column} = $2 where team_id = $1"
    ))
    .bind(team_id)
    .bind(rules::notice_key(version, &notice.period))
    .execute(tx.db())
    .await?;
    Ok(())
}

#[async_trait]
impl SpendStore for PostgresStore {
    async fn budget(&self, team_id: i64) -> StoreResult<BudgetView> {
        let mut tx = self.pool.begin().await?;
        let now = now_ms(&mut tx).await?;
        budget_view(&mut tx, team_id, now).await
    }

    async fn set_budget(
        &self,
        team_id: i64,
        by: &str,
        if_match: Option<i64>,
        budget: BudgetSettings,
    ) -> StoreResult<BudgetView> {
        rules::check_budget(&budget)?;
        let mut tx = self.pool.begin().await?;
        // Two first settings of one team at once: the second waits here, then sees version 1.
        sqlx::query("select pg_advisory_xact_lock(7462, $1::int)")
            .bind(team_id as i32)
            .execute(tx.db())
            .await?;
        let current: i64 =
            sqlx::query_scalar("select version from spend_budgets where team_id = $1 for update")
                .bind(team_id)
                .fetch_optional(tx.db())
                .await?
                .unwrap_or(0);
        check_version(if_match, current)?;
        let now = now_ms(&mut tx).await?;
        sqlx::query(
            "insert into spend_budgets (team_id, version, settings, updated_by, updated_at)
             values ($1, $2, $3, $4, $5)
             on conflict (team_id) do update set version = excluded.version,
                 settings = excluded.settings, updated_by = excluded.updated_by,
                 updated_at = excluded.updated_at",
        )
        .bind(team_id)
        .bind(current + 1)
        .bind(rules::settings_to_text(&budget))
        .bind(by)
        .bind(now)
        .execute(tx.db())
        .await?;
        let view = budget_view(&mut tx, team_id, now).await?;
        tx.commit().await?;
        Ok(view)
    }

    async fn reserve_spend(&self, caller: &Caller, call: ReserveSpend) -> StoreResult<Reserved> {
        rules::check_model("model", &call.model)?;
        rules::check_task(call.task.as_deref())?;
        let mut tx = self.pool.begin().await?;
        let reserved = super::spend_calls::reserve(&mut tx, caller, &call).await?;
        tx.commit().await?;
        Ok(reserved)
    }

    async fn settle_spend(
        &self,
        caller: &Caller,
        id: i64,
        tokens: SettleSpend,
    ) -> StoreResult<Settled> {
        rules::check_tokens(&tokens)?;
        let mut tx = self.pool.begin().await?;
        let settled = super::spend_calls::settle(&mut tx, caller, id, tokens).await?;
        tx.commit().await?;
        Ok(settled)
    }

    async fn spend_report(&self, team_id: i64, task: Option<String>) -> StoreResult<SpendReport> {
        rules::check_task(task.as_deref())?;
        let mut tx = self.pool.begin().await?;
        super::spend_report::report(&mut tx, team_id, task.as_deref()).await
    }

    async fn spend_by_team(&self) -> StoreResult<Vec<(String, SpendTotals)>> {
        let rows = sqlx::query(&format!(
            "select t.name, {DAY_SUMS} from spend_days d join teams t on t.id = d.team_id
             group by t.name order by t.name collate \"C\""
        ))
        .fetch_all(self.pool.read().await?.db())
        .await?;
        rows.iter()
            .map(|r| Ok((r.try_get(0)?, totals_at(r, 1)?)))
            .collect()
    }

    async fn budget_exhausted(&self, team_id: i64) -> StoreResult<bool> {
        let mut tx = self.pool.begin().await?;
        // A team without a budget: one primary-key probe, nothing summed.
        let Some(stored) = load_budget(&mut tx, team_id, false).await? else {
            return Ok(false);
        };
        let now = now_ms(&mut tx).await?;
        let spent = period_spent(&mut tx, team_id, &stored.settings, &rules::day_of(now)).await?;
        Ok(rules::team_exhausted(&stored.settings, &spent))
    }
}
