//! Model spending on PostgreSQL (`store::spend`): a reservation runs in one transaction that
//! first locks the team's budget row (`for update`), so reservations of a team with a budget
//! are judged one after another across every replica, each seeing the calls settled before
//! it; a team without a budget takes no lock. Times and days are the database's clock.

use super::super::error::{StoreError, StoreResult};
use super::super::rules::spend::{self as rules, BudgetNotice, Reserved, Settled, StoredBudget};
use super::super::rules::{check_version, fmt_time};
use super::super::spend::SpendStore;
use super::super::types::Caller;
use super::db::PoolTx;
use super::{PostgresStore, DB_NOW_MS};
use async_trait::async_trait;
use huddle_wire::{
    BudgetPeriod, BudgetSettings, BudgetView, ReserveSpend, SettleSpend, SpendCall, SpendGroup,
    SpendReport, SpendTotals, MAX_SPEND_GROUPS,
};
use sqlx::postgres::PgRow;
use sqlx::Row;

const CALL: &str = "id, task_id, agent, model, prompt_tokens, completion_tokens, cost_micros, day,
                    created_at, settled_at";
const SUMS: &str = "count(*)::bigint, coalesce(sum(prompt_tokens), 0)::bigint,
                    coalesce(sum(completion_tokens), 0)::bigint,
                    coalesce(sum(cost_micros), 0)::bigint";
const DAY_SUMS: &str = "coalesce(sum(calls), 0)::bigint, coalesce(sum(prompt_tokens), 0)::bigint,
                        coalesce(sum(completion_tokens), 0)::bigint,
                        coalesce(sum(cost_micros), 0)::bigint";

fn call_at(r: &PgRow) -> sqlx::Result<SpendCall> {
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

fn totals_at(r: &PgRow, i: usize) -> sqlx::Result<SpendTotals> {
    Ok(rules::totals(
        r.try_get(i)?,
        r.try_get(i + 1)?,
        r.try_get(i + 2)?,
        r.try_get(i + 3)?,
    ))
}

async fn now_ms(tx: &mut PoolTx) -> StoreResult<i64> {
    Ok(sqlx::query_scalar(&format!("select {DB_NOW_MS}"))
        .fetch_one(tx.db())
        .await?)
}

/// The team's budget; `lock` holds its row to the commit.
async fn load_budget(
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

async fn period_spent(
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

async fn task_spent(tx: &mut PoolTx, team_id: i64, task: &str) -> StoreResult<SpendTotals> {
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

async fn mark_notice(
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

async fn reserve(tx: &mut PoolTx, caller: &Caller, call: &ReserveSpend) -> StoreResult<Reserved> {
    let team_id = caller.team_id;
    let stored = load_budget(tx, team_id, true).await?;
    let now = now_ms(tx).await?;
    let today = rules::day_of(now);
    if let Some(stored) = stored {
        let b = &stored.settings;
        let period = rules::period_of(b, &today);
        let spent = period_spent(tx, team_id, b, &today).await?;
        let task_spent = match (&call.task, b.task_max_tokens.or(b.task_max_cost_micros)) {
            (Some(task), Some(_)) => Some((task.as_str(), task_spent(tx, team_id, task).await?)),
            _ => None,
        };
        let task = task_spent.as_ref().map(|(id, t)| (*id, t));
        if let Some(refusal) = rules::judge(b, &period, &spent, task) {
            let notice = (rules::team_exhausted(b, &spent)
                && rules::refusal_notice_due(&stored, &period))
            .then(|| BudgetNotice {
                kind: rules::NoticeKind::Exhausted,
                period: period.clone(),
                spent,
                budget: b.clone(),
                task: call.task.clone(),
            });
            if let Some(n) = &notice {
                mark_notice(tx, team_id, n, stored.version).await?;
            }
            return Ok(Reserved::Refused(refusal, notice));
        }
    }
    let id: i64 = sqlx::query_scalar(
        "insert into spend_calls (team_id, task_id, agent, model, day, created_at)
         values ($1, $2, $3, $4, $5, $6) returning id",
    )
    .bind(team_id)
    .bind(&call.task)
    .bind(&caller.agent)
    .bind(&call.model)
    .bind(&today)
    .bind(now)
    .fetch_one(tx.db())
    .await?;
    sqlx::query(
        "insert into spend_days (team_id, day, calls) values ($1, $2, 1)
         on conflict (team_id, day) do update set calls = spend_days.calls + 1",
    )
    .bind(team_id)
    .bind(&today)
    .execute(tx.db())
    .await?;
    Ok(Reserved::Granted(SpendCall {
        id,
        task: call.task.clone(),
        agent: caller.agent.clone(),
        model: call.model.clone(),
        prompt_tokens: 0,
        completion_tokens: 0,
        cost_micros: 0,
        day: today,
        created_at: fmt_time(now),
        settled: false,
    }))
}

async fn settle(
    tx: &mut PoolTx,
    caller: &Caller,
    id: i64,
    tokens: SettleSpend,
) -> StoreResult<Settled> {
    let team_id = caller.team_id;
    // The budget row first, as a reservation takes it: settlements and reservations of a
    // team with a budget are judged in one order.
    let stored = load_budget(tx, team_id, true).await?;
    let row = sqlx::query(&format!(
        "select {CALL} from spend_calls where team_id = $1 and id = $2 and agent = $3 for update"
    ))
    .bind(team_id)
    .bind(id)
    .bind(&caller.agent)
    .fetch_optional(tx.db())
    .await?;
    let call = match row {
        Some(r) => call_at(&r)?,
        None => {
            return Err(StoreError::not_found(format!(
                "spend call {id} of {}",
                caller.agent
            )))
        }
    };
    if call.settled {
        return Err(rules::already_settled(id));
    }
    let now = now_ms(tx).await?;
    let today = rules::day_of(now);
    let (prompt, completion) = (tokens.prompt_tokens, tokens.completion_tokens);
    let cost = rules::cost(
        stored.as_ref().map(|s| &s.settings),
        &call.model,
        prompt,
        completion,
    );
    let before = match &stored {
        Some(s) => Some(period_spent(tx, team_id, &s.settings, &today).await?),
        None => None,
    };
    sqlx::query(
        "update spend_calls set prompt_tokens = $3, completion_tokens = $4, cost_micros = $5,
             settled_at = $6
         where team_id = $1 and id = $2",
    )
    .bind(team_id)
    .bind(id)
    .bind(prompt as i64)
    .bind(completion as i64)
    .bind(cost as i64)
    .bind(now)
    .execute(tx.db())
    .await?;
    sqlx::query(
        "update spend_days set prompt_tokens = prompt_tokens + $3,
             completion_tokens = completion_tokens + $4, cost_micros = cost_micros + $5
         where team_id = $1 and day = $2",
    )
    .bind(team_id)
    .bind(&call.day)
    .bind(prompt as i64)
    .bind(completion as i64)
    .bind(cost as i64)
    .execute(tx.db())
    .await?;
    let mut notice = None;
    if let (Some(stored), Some(before)) = (&stored, before) {
        let counts = stored.settings.period == BudgetPeriod::Total || call.day == today;
        let after = rules::plus(&before, prompt, completion, cost);
        let period = rules::period_of(&stored.settings, &today);
        if let Some(kind) = counts
            .then(|| rules::notice_due(stored, &period, &before, &after))
            .flatten()
        {
            let n = BudgetNotice {
                kind,
                period,
                spent: after,
                budget: stored.settings.clone(),
                task: call.task.clone(),
            };
            mark_notice(tx, team_id, &n, stored.version).await?;
            notice = Some(n);
        }
    }
    Ok(Settled {
        call: SpendCall {
            prompt_tokens: prompt,
            completion_tokens: completion,
            cost_micros: cost,
            settled: true,
            ..call
        },
        notice,
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
        let reserved = reserve(&mut tx, caller, &call).await?;
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
        let settled = settle(&mut tx, caller, id, tokens).await?;
        tx.commit().await?;
        Ok(settled)
    }

    async fn spend_report(&self, team_id: i64, task: Option<String>) -> StoreResult<SpendReport> {
        rules::check_task(task.as_deref())?;
        let task = task.as_deref();
        let mut tx = self.pool.begin().await?;
        let total = sqlx::query(&format!(
            "select {SUMS} from spend_calls where team_id = $1 and ($2::text is null or task_id = $2)"
        ))
        .bind(team_id)
        .bind(task)
        .fetch_one(tx.db())
        .await?;
        Ok(SpendReport {
            total: totals_at(&total, 0)?,
            by_task: groups(&mut tx, team_id, task, "task_id").await?,
            by_agent: groups(&mut tx, team_id, task, "agent").await?,
            by_model: groups(&mut tx, team_id, task, "model").await?,
            by_day: groups(&mut tx, team_id, task, "day").await?,
        })
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
