//! Model spending on SQLite (`store::spend`): a reservation and a settlement are each one
//! writer job, so the budget check and the ledger row it admits commit together and no other
//! write of the team runs between them.

use super::super::error::{StoreError, StoreResult};
use super::super::rules::check_version;
use super::super::rules::spend::{self as rules, BudgetNotice, Reserved, Settled, StoredBudget};
use super::super::spend::SpendStore;
use super::super::types::Caller;
use super::SqliteStore;
use async_trait::async_trait;
use huddle_wire::{
    BudgetPeriod, BudgetSettings, BudgetView, ReserveSpend, SettleSpend, SpendCall, SpendReport,
    SpendTotals,
};
use rusqlite::{params, Connection, OptionalExtension, Row};

const CALL: &str = "id, task_id, agent, model, prompt_tokens, completion_tokens, cost_micros, day,
                    created_at, settled_at";
pub(super) const SUMS: &str =
    "count(*), coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0),
                    coalesce(sum(cost_micros), 0)";

fn call_at(r: &Row<'_>) -> rusqlite::Result<SpendCall> {
    let n = |i: usize| -> rusqlite::Result<u64> { Ok(r.get::<_, i64>(i)?.max(0) as u64) };
    Ok(SpendCall {
        id: r.get(0)?,
        task: r.get(1)?,
        agent: r.get(2)?,
        model: r.get(3)?,
        prompt_tokens: n(4)?,
        completion_tokens: n(5)?,
        cost_micros: n(6)?,
        day: r.get(7)?,
        created_at: super::super::rules::fmt_time(r.get(8)?),
        settled: r.get::<_, Option<i64>>(9)?.is_some(),
    })
}

pub(super) fn totals_at(r: &Row<'_>, i: usize) -> rusqlite::Result<SpendTotals> {
    Ok(rules::totals(
        r.get(i)?,
        r.get(i + 1)?,
        r.get(i + 2)?,
        r.get(i + 3)?,
    ))
}

fn load_budget(conn: &Connection, team_id: i64) -> StoreResult<Option<StoredBudget>> {
    let row = conn
        .prepare_cached(
            "select version, settings, updated_by, updated_at, warned, exhausted
             from spend_budgets where team_id = ?1",
        )?
        .query_row([team_id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, Option<String>>(5)?,
            ))
        })
        .optional()?;
    row.map(
        |(version, text, updated_by, updated_at, warned, exhausted)| {
            Ok(StoredBudget {
                version,
                settings: rules::settings_from_text(&text)?,
                updated_by,
                updated_at,
                warned,
                exhausted,
            })
        },
    )
    .transpose()
}

/// What the team spent in the budget's period (`today` for a daily one).
fn period_spent(
    conn: &Connection,
    team_id: i64,
    b: &BudgetSettings,
    today: &str,
) -> StoreResult<SpendTotals> {
    let sums = "coalesce(sum(calls), 0), coalesce(sum(prompt_tokens), 0),
                coalesce(sum(completion_tokens), 0), coalesce(sum(cost_micros), 0)";
    let spent = match b.period {
        BudgetPeriod::Day => conn
            .prepare_cached(&format!(
                "select {sums} from spend_days where team_id = ?1 and day = ?2"
            ))?
            .query_row(params![team_id, today], |r| totals_at(r, 0))?,
        BudgetPeriod::Total => conn
            .prepare_cached(&format!("select {sums} from spend_days where team_id = ?1"))?
            .query_row([team_id], |r| totals_at(r, 0))?,
    };
    Ok(spent)
}

fn task_spent(conn: &Connection, team_id: i64, task: &str) -> StoreResult<SpendTotals> {
    Ok(conn
        .prepare_cached(&format!(
            "select {SUMS} from spend_calls where team_id = ?1 and task_id = ?2"
        ))?
        .query_row(params![team_id, task], |r| totals_at(r, 0))?)
}

fn budget_view(conn: &Connection, team_id: i64, now_ms: i64) -> StoreResult<BudgetView> {
    let stored = load_budget(conn, team_id)?;
    let today = rules::day_of(now_ms);
    let settings = stored
        .as_ref()
        .map(|s| s.settings.clone())
        .unwrap_or_default();
    let period = rules::period_of(&settings, &today);
    let spent = period_spent(conn, team_id, &settings, &today)?;
    Ok(rules::view(stored.as_ref(), &period, spent))
}

fn mark_notice(
    conn: &Connection,
    team_id: i64,
    notice: &BudgetNotice,
    version: i64,
) -> StoreResult<()> {
    let column = match notice.kind {
        rules::NoticeKind::Warning => "warned",
        rules::NoticeKind::Exhausted => "exhausted",
    };
    conn.prepare_cached(&format!(
        "update spend_budgets set {column} = ?2 where team_id = ?1"
    ))?
    .execute(params![team_id, rules::notice_key(version, &notice.period)])?;
    Ok(())
}

fn reserve(
    conn: &Connection,
    caller: &Caller,
    call: &ReserveSpend,
    now_ms: i64,
) -> StoreResult<Reserved> {
    let team_id = caller.team_id;
    let today = rules::day_of(now_ms);
    if let Some(stored) = load_budget(conn, team_id)? {
        let b = &stored.settings;
        let period = rules::period_of(b, &today);
        let spent = period_spent(conn, team_id, b, &today)?;
        let task_spent = match (&call.task, b.task_max_tokens.or(b.task_max_cost_micros)) {
            (Some(task), Some(_)) => Some((task.as_str(), task_spent(conn, team_id, task)?)),
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
                mark_notice(conn, team_id, n, stored.version)?;
            }
            return Ok(Reserved::Refused(refusal, notice));
        }
    }
    let id: i64 = conn
        .prepare_cached(
            "insert into spend_calls (team_id, task_id, agent, model, day, created_at)
             values (?1, ?2, ?3, ?4, ?5, ?6) returning id",
        )?
        .query_row(
            params![team_id, call.task, caller.agent, call.model, today, now_ms],
            |r| r.get(0),
        )?;
    conn.prepare_cached(
        "insert into spend_days (team_id, day, calls) values (?1, ?2, 1)
         on conflict (team_id, day) do update set calls = calls + 1",
    )?
    .execute(params![team_id, today])?;
    Ok(Reserved::Granted(SpendCall {
        id,
        task: call.task.clone(),
        agent: caller.agent.clone(),
        model: call.model.clone(),
        prompt_tokens: 0,
        completion_tokens: 0,
        cost_micros: 0,
        day: today,
        created_at: super::super::rules::fmt_time(now_ms),
        settled: false,
    }))
}

fn settle(
    conn: &Connection,
    caller: &Caller,
    id: i64,
    tokens: SettleSpend,
    now_ms: i64,
) -> StoreResult<Settled> {
    let team_id = caller.team_id;
    let call = conn
        .prepare_cached(&format!(
            "select {CALL} from spend_calls where team_id = ?1 and id = ?2 and agent = ?3"
        ))?
        .query_row(params![team_id, id, caller.agent], call_at)
        .optional()?
        .ok_or_else(|| StoreError::not_found(format!("spend call {id} of {}", caller.agent)))?;
    if call.settled {
        return Err(rules::already_settled(id));
    }
    let stored = load_budget(conn, team_id)?;
    let today = rules::day_of(now_ms);
    let (prompt, completion) = (tokens.prompt_tokens, tokens.completion_tokens);
    let cost = rules::cost(
        stored.as_ref().map(|s| &s.settings),
        &call.model,
        prompt,
        completion,
    );
    let before = match &stored {
        Some(s) => Some(period_spent(conn, team_id, &s.settings, &today)?),
        None => None,
    };
    conn.prepare_cached(
        "update spend_calls set prompt_tokens = ?3, completion_tokens = ?4, cost_micros = ?5,
             settled_at = ?6
         where team_id = ?1 and id = ?2",
    )?
    .execute(params![
        team_id,
        id,
        prompt as i64,
        completion as i64,
        cost as i64,
        now_ms
    ])?;
    conn.prepare_cached(
        "update spend_days set prompt_tokens = prompt_tokens + ?3,
             completion_tokens = completion_tokens + ?4, cost_micros = cost_micros + ?5
         where team_id = ?1 and day = ?2",
    )?
    .execute(params![
        team_id,
        call.day,
        prompt as i64,
        completion as i64,
        cost as i64
    ])?;
    let mut notice = None;
    if let (Some(stored), Some(before)) = (&stored, before) {
        // A call reserved on an earlier day counts toward today's period only in a total.
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
            mark_notice(conn, team_id, &n, stored.version)?;
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

#[async_trait]
impl SpendStore for SqliteStore {
    async fn budget(&self, team_id: i64) -> StoreResult<BudgetView> {
        let now = chrono::Utc::now().timestamp_millis();
        self.readers
            .read_team(team_id, move |conn| budget_view(conn, team_id, now))
            .await
    }

    async fn set_budget(
        &self,
        team_id: i64,
        by: &str,
        if_match: Option<i64>,
        budget: BudgetSettings,
    ) -> StoreResult<BudgetView> {
        rules::check_budget(&budget)?;
        let by = by.to_string();
        self.writer()?
            .write_team(team_id, move |ctx| {
                let current: i64 = ctx
                    .conn
                    .prepare_cached("select version from spend_budgets where team_id = ?1")?
                    .query_row([team_id], |r| r.get(0))
                    .optional()?
                    .unwrap_or(0);
                check_version(if_match, current)?;
                ctx.conn
                    .prepare_cached(
                        "insert into spend_budgets (team_id, version, settings, updated_by, updated_at)
                         values (?1, ?2, ?3, ?4, ?5)
                         on conflict (team_id) do update set version = excluded.version,
                             settings = excluded.settings, updated_by = excluded.updated_by,
                             updated_at = excluded.updated_at",
                    )?
                    .execute(params![
                        team_id,
                        current + 1,
                        rules::settings_to_text(&budget),
                        by,
                        ctx.now_ms
                    ])?;
                budget_view(ctx.conn, team_id, ctx.now_ms)
            })
            .await
    }

    async fn reserve_spend(&self, caller: &Caller, call: ReserveSpend) -> StoreResult<Reserved> {
        rules::check_model("model", &call.model)?;
        rules::check_task(call.task.as_deref())?;
        let caller = caller.clone();
        self.writer()?
            .write_team(caller.team_id, move |ctx| {
                reserve(ctx.conn, &caller, &call, ctx.now_ms)
            })
            .await
    }

    async fn settle_spend(
        &self,
        caller: &Caller,
        id: i64,
        tokens: SettleSpend,
    ) -> StoreResult<Settled> {
        rules::check_tokens(&tokens)?;
        let caller = caller.clone();
        self.writer()?
            .write_team(caller.team_id, move |ctx| {
                settle(ctx.conn, &caller, id, tokens, ctx.now_ms)
            })
            .await
    }

    async fn spend_report(&self, team_id: i64, task: Option<String>) -> StoreResult<SpendReport> {
        rules::check_task(task.as_deref())?;
        self.readers
            .read_team(team_id, move |conn| {
                super::spend_report::report(conn, team_id, task.as_deref())
            })
            .await
    }

    async fn spend_by_team(&self) -> StoreResult<Vec<(String, SpendTotals)>> {
        self.readers
            .read(|conn| {
                let mut stmt = conn.prepare_cached(
                    "select t.name, sum(d.calls), sum(d.prompt_tokens), sum(d.completion_tokens),
                            sum(d.cost_micros)
                     from spend_days d join teams t on t.id = d.team_id
                     group by t.name order by t.name",
                )?;
                let rows = stmt.query_map([], |r| Ok((r.get(0)?, totals_at(r, 1)?)))?;
                Ok(rows.collect::<Result<_, _>>()?)
            })
            .await
    }

    async fn budget_exhausted(&self, team_id: i64) -> StoreResult<bool> {
        let now = chrono::Utc::now().timestamp_millis();
        self.readers
            .read_team(team_id, move |conn| {
                // A team without a budget: one primary-key probe, nothing summed.
                let Some(stored) = load_budget(conn, team_id)? else {
                    return Ok(false);
                };
                let spent = period_spent(conn, team_id, &stored.settings, &rules::day_of(now))?;
                Ok(rules::team_exhausted(&stored.settings, &spent))
            })
            .await
    }
}
