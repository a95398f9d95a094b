//! Model spending's rules, for both backends: what a valid budget is, what a call costs,
//! whether a reservation is refused, and when the coordinators are told. Backends only load
//! the budget and the totals, and store what these functions decide.
//!
//! A reservation is granted while what the team (and the task) has *settled* is below every
//! limit; its tokens are counted when it is settled. So each worker, holding one reservation
//! at a time, can take the team past a limit by at most the one call it was granted.

use super::super::error::{StoreError, StoreResult};
use super::{fmt_time, validate};
use huddle_wire::{
    codes, BudgetPeriod, BudgetSettings, BudgetView, SettleSpend, SpendCall, SpendTotals,
    DEFAULT_WARN_PERCENT, MAX_PRICED_MODELS, MAX_SETTING,
};
use serde_json::json;

/// The longest model name a call or a price names.
pub const MAX_MODEL_CHARS: usize = 200;

/// A budget as stored: the settings and the bookkeeping of its notices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredBudget {
    pub version: i64,
    pub settings: BudgetSettings,
    pub updated_by: String,
    pub updated_at: i64,
    /// `version:period` of the last warning sent.
    pub warned: Option<String>,
    /// `version:period` of the last exhaustion notice sent.
    pub exhausted: Option<String>,
}

/// What the coordinators are told about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    Warning,
    Exhausted,
}

impl NoticeKind {
    /// The message type (and webhook trigger) it is posted as.
    pub fn message_type(self) -> &'static str {
        match self {
            NoticeKind::Warning => "budget_warning",
            NoticeKind::Exhausted => "budget_exceeded",
        }
    }
}

/// A notice the store decided is due (recorded as sent in the same write): the HTTP layer
/// posts it to the coordinators, which also fires the webhooks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetNotice {
    pub kind: NoticeKind,
    pub period: String,
    pub spent: SpendTotals,
    pub budget: BudgetSettings,
    /// The task whose call crossed the line, if it named one.
    pub task: Option<String>,
}

/// A reservation's outcome. A refusal may still carry a notice (recorded in the write that
/// refused), so it is an answer here and becomes the error in the HTTP layer.
#[derive(Debug)]
pub enum Reserved {
    Granted(SpendCall),
    Refused(StoreError, Option<BudgetNotice>),
}

/// A settled call, and the notice its tokens made due.
#[derive(Debug)]
pub struct Settled {
    pub call: SpendCall,
    pub notice: Option<BudgetNotice>,
}

/// The UTC day of `ms`, as the ledger names it.
pub fn day_of(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .format("%Y-%m-%d")
        .to_string()
}

/// The period the budget counts now: `total`, or `today` for a daily budget.
pub fn period_of(settings: &BudgetSettings, today: &str) -> String {
    match settings.period {
        BudgetPeriod::Total => "total".to_string(),
        BudgetPeriod::Day => today.to_string(),
    }
}

/// Refuses a budget the API cannot keep: values past 2^53, a threshold outside 1–100 or more
/// than [`MAX_PRICED_MODELS`] prices.
pub fn check_budget(b: &BudgetSettings) -> StoreResult<()> {
    let values = [
        ("maxTokens", b.max_tokens),
        ("maxCostMicros", b.max_cost_micros),
        ("taskMaxTokens", b.task_max_tokens),
        ("taskMaxCostMicros", b.task_max_cost_micros),
    ];
    for (field, value) in values {
        if value.is_some_and(|v| v > MAX_SETTING) {
            return Err(StoreError::invalid(
                field,
                format!("{field} must be at most {MAX_SETTING}"),
            ));
        }
    }
    if let Some(p) = b.warn_percent.filter(|p| !(1..=100).contains(p)) {
        return Err(StoreError::invalid(
            "warnPercent",
            format!("warnPercent must be between 1 and 100, got {p}"),
        ));
    }
    if b.prices.len() > MAX_PRICED_MODELS {
        return Err(StoreError::invalid(
            "prices",
            format!(
                "at most {MAX_PRICED_MODELS} models are priced, got {}",
                b.prices.len()
            ),
        ));
    }
    // A price's model name is not checked: one no call names is never used, and the body's
    // size bounds its length.
    for (model, price) in &b.prices {
        if price.prompt_per_million.max(price.completion_per_million) > MAX_SETTING {
            return Err(StoreError::invalid(
                "prices",
                format!("the prices of {model} must be at most {MAX_SETTING}"),
            ));
        }
    }
    Ok(())
}

/// A model name: 1–200 characters.
pub fn check_model(field: &str, model: &str) -> StoreResult<()> {
    validate::text(field, model, MAX_MODEL_CHARS)
}

/// A reservation's task, when it names one: a task id's shape (`TEST-001`).
pub fn check_task(task: Option<&str>) -> StoreResult<()> {
    if let Some(t) = task {
        validate::task_id("task", t)?;
    }
    Ok(())
}

/// A settlement's tokens: each at most 2^32 (no model call uses more), so sums stay exact.
pub fn check_tokens(t: &SettleSpend) -> StoreResult<()> {
    const MAX: u64 = 1 << 32;
    for (field, v) in [
        ("promptTokens", t.prompt_tokens),
        ("completionTokens", t.completion_tokens),
    ] {
        if v > MAX {
            return Err(StoreError::invalid(
                field,
                format!("{field} must be at most {MAX}, got {v}"),
            ));
        }
    }
    Ok(())
}

/// What a call of `model` using these tokens costs under `budget`'s prices (0 for a model it
/// does not price), rounded up to a whole micro-unit.
pub fn cost(budget: Option<&BudgetSettings>, model: &str, prompt: u64, completion: u64) -> u64 {
    let Some(price) = budget.and_then(|b| b.prices.get(model)) else {
        return 0;
    };
    let micros = prompt as u128 * price.prompt_per_million as u128
        + completion as u128 * price.completion_per_million as u128;
    micros.div_ceil(1_000_000).min(i64::MAX as u128) as u64
}

/// The limit `spent` reached, if any: `(limit, value, spent)`.
fn reached(
    max_tokens: Option<u64>,
    max_cost: Option<u64>,
    spent: &SpendTotals,
) -> Option<(&'static str, u64, u64)> {
    if let Some(m) = max_tokens.filter(|m| spent.tokens >= *m) {
        return Some(("tokens", m, spent.tokens));
    }
    if let Some(m) = max_cost.filter(|m| spent.cost_micros >= *m) {
        return Some(("cost", m, spent.cost_micros));
    }
    None
}

/// Whether the team's limits are reached by what it spent in the period.
pub fn team_exhausted(b: &BudgetSettings, spent: &SpendTotals) -> bool {
    reached(b.max_tokens, b.max_cost_micros, spent).is_some()
}

/// The refusal of a reservation: the team's period spent, or the task's ceiling.
pub fn judge(
    b: &BudgetSettings,
    period: &str,
    team_spent: &SpendTotals,
    task: Option<(&str, &SpendTotals)>,
) -> Option<StoreError> {
    if let Some((limit, max, spent)) = reached(b.max_tokens, b.max_cost_micros, team_spent) {
        return Some(StoreError::Conflict {
            code: codes::BUDGET_EXCEEDED,
            message: format!(
                "the team's model budget is spent: {spent} of {max} {} in period {period}; \
                 raise it (PUT /v1/teams/{{team}}/budget) or wait for the next period",
                unit(limit)
            ),
            details: json!({"scope": "team", "limit": limit, "max": max, "spent": spent,
                            "period": period}),
        });
    }
    let (id, spent) = task?;
    let (limit, max, spent) = reached(b.task_max_tokens, b.task_max_cost_micros, spent)?;
    Some(StoreError::Conflict {
        code: codes::BUDGET_EXCEEDED,
        message: format!(
            "task {id} has spent its model budget: {spent} of {max} {}",
            unit(limit)
        ),
        details: json!({"scope": "task", "task": id, "limit": limit, "max": max,
                        "spent": spent}),
    })
}

fn unit(limit: &str) -> &'static str {
    if limit == "tokens" {
        "tokens"
    } else {
        "cost micro-units"
    }
}

/// The notice a settlement makes due, moving the team's period spending from `before` to
/// `after`: exhaustion when a limit is now reached, else a warning when the threshold was
/// crossed — each once per budget version and period (`sent` is what was sent).
pub fn notice_due(
    stored: &StoredBudget,
    period: &str,
    before: &SpendTotals,
    after: &SpendTotals,
) -> Option<NoticeKind> {
    let b = &stored.settings;
    let key = notice_key(stored.version, period);
    if team_exhausted(b, after) {
        return (stored.exhausted.as_deref() != Some(&key)).then_some(NoticeKind::Exhausted);
    }
    let percent = b.warn_percent.unwrap_or(DEFAULT_WARN_PERCENT) as u128;
    let at = |max: Option<u64>| max.map(|m| (m as u128 * percent).div_ceil(100) as u64);
    let crossed = |line: Option<u64>, was: u64, now: u64| line.is_some_and(|l| was < l && now >= l);
    let warn = crossed(at(b.max_tokens), before.tokens, after.tokens)
        || crossed(at(b.max_cost_micros), before.cost_micros, after.cost_micros);
    (warn && stored.warned.as_deref() != Some(&key)).then_some(NoticeKind::Warning)
}

/// A refused reservation makes the exhaustion notice due when it was never sent for this
/// budget and period (a budget lowered below what was spent).
pub fn refusal_notice_due(stored: &StoredBudget, period: &str) -> bool {
    stored.exhausted.as_deref() != Some(&notice_key(stored.version, period))
}

/// What the notice columns record.
pub fn notice_key(version: i64, period: &str) -> String {
    format!("{version}:{period}")
}

/// The budget's answer: the settings, the period's spending and what is left.
pub fn view(stored: Option<&StoredBudget>, period: &str, spent: SpendTotals) -> BudgetView {
    let b = stored.map(|s| s.settings.clone()).unwrap_or_default();
    BudgetView {
        version: stored.map_or(0, |s| s.version),
        period: period.to_string(),
        remaining_tokens: b.max_tokens.map(|m| m.saturating_sub(spent.tokens)),
        remaining_cost_micros: b
            .max_cost_micros
            .map(|m| m.saturating_sub(spent.cost_micros)),
        exhausted: team_exhausted(&b, &spent),
        updated_by: stored.map(|s| s.updated_by.clone()),
        updated_at: stored.map(|s| fmt_time(s.updated_at)),
        budget: b,
        spent,
    }
}

/// Totals from stored sums (`calls, prompt, completion, cost`; negative or null read as 0).
pub fn totals(calls: i64, prompt: i64, completion: i64, cost: i64) -> SpendTotals {
    let n = |v: i64| v.max(0) as u64;
    SpendTotals {
        calls: n(calls),
        prompt_tokens: n(prompt),
        completion_tokens: n(completion),
        tokens: n(prompt).saturating_add(n(completion)),
        cost_micros: n(cost),
    }
}

/// Adds one settled call's tokens and cost to `t`.
pub fn plus(t: &SpendTotals, prompt: u64, completion: u64, cost: u64) -> SpendTotals {
    SpendTotals {
        calls: t.calls,
        prompt_tokens: t.prompt_tokens.saturating_add(prompt),
        completion_tokens: t.completion_tokens.saturating_add(completion),
        tokens: t.tokens.saturating_add(prompt).saturating_add(completion),
        cost_micros: t.cost_micros.saturating_add(cost),
    }
}

/// The refusal of a second settlement of one call.
pub fn already_settled(id: i64) -> StoreError {
    StoreError::Conflict {
        code: codes::ALREADY_SETTLED,
        message: format!("spend call {id} is already settled"),
        details: json!({"id": id}),
    }
}

/// The budget stored as JSON text, and back.
pub fn settings_to_text(b: &BudgetSettings) -> String {
    serde_json::to_string(b).expect("a budget serialises")
}

pub fn settings_from_text(text: &str) -> StoreResult<BudgetSettings> {
    serde_json::from_str(text).map_err(|e| StoreError::Internal(format!("team budget: {e}")))
}

#[cfg(test)]
#[path = "spend_tests.rs"]
mod tests;
