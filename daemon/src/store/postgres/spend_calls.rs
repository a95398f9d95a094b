//! A reservation and a settlement on PostgreSQL (`store::spend`): each one transaction that
//! first locks the team's budget row, so a team's reservations are judged one after another
//! across every replica.

use super::super::error::{StoreError, StoreResult};
use super::super::rules::fmt_time;
use super::super::rules::spend::{self as rules, BudgetNotice, Reserved, Settled};
use super::super::types::Caller;
use super::db::PoolTx;
use super::spend::{call_at, load_budget, mark_notice, now_ms, period_spent, task_spent, CALL};
use huddle_wire::{BudgetPeriod, ReserveSpend, SettleSpend, SpendCall};

pub(super) async fn reserve(
    tx: &mut PoolTx,
    caller: &Caller,
    call: &ReserveSpend,
) -> StoreResult<Reserved> {
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

pub(super) async fn settle(
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
