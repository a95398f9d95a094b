//! `huddle spend` and `huddle budget`: what the team spent on models (by task, agent, model
//! and day) and the budget the daemon holds it to.

use crate::output::{self, Table};
use crate::{CliResult, Ctx};
use clap::{Args, Subcommand};
use huddle_sdk::wire::{BudgetPeriod, BudgetSettings, BudgetView, ModelPrice, SpendGroup};

#[derive(Debug, Args)]
pub struct SpendArgs {
    /// Only this task's calls (TEST-001).
    #[arg(long)]
    task: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum BudgetCmd {
    /// The budget, what the period spent and what is left.
    Show,
    /// Replace the budget (a coordinator, a lead or the admin); limits left out: none. Sent
    /// with the version just read, so a change made meanwhile is not overwritten.
    Set {
        /// What the limits count over: `total` or `day` (UTC).
        #[arg(long, default_value = "total", value_parser = parse_period)]
        period: BudgetPeriod,
        /// Tokens the team may spend in the period.
        #[arg(long)]
        max_tokens: Option<u64>,
        /// Cost (micro-units) the team may spend in the period.
        #[arg(long)]
        max_cost_micros: Option<u64>,
        /// Tokens one task may spend.
        #[arg(long)]
        task_max_tokens: Option<u64>,
        /// Cost one task may spend.
        #[arg(long)]
        task_max_cost_micros: Option<u64>,
        /// Warn the coordinators at this share of a team limit (1–100; 80 when left out).
        #[arg(long)]
        warn_percent: Option<u64>,
        /// A model's price, `MODEL=PROMPT:COMPLETION` in micro-units per million tokens
        /// (repeat for each model).
        #[arg(long = "price", value_parser = parse_price)]
        prices: Vec<(String, ModelPrice)>,
    },
}

fn parse_period(s: &str) -> Result<BudgetPeriod, String> {
    match s {
        "total" => Ok(BudgetPeriod::Total),
        "day" => Ok(BudgetPeriod::Day),
        other => Err(format!("expected total or day, got {other:?}")),
    }
}

fn parse_price(s: &str) -> Result<(String, ModelPrice), String> {
    let bad = || format!("expected MODEL=PROMPT:COMPLETION, got {s:?}");
    let (model, prices) = s.rsplit_once('=').ok_or_else(bad)?;
    let (p, c) = prices.split_once(':').ok_or_else(bad)?;
    let price = ModelPrice {
        prompt_per_million: p.trim().parse().map_err(|_| bad())?,
        completion_per_million: c.trim().parse().map_err(|_| bad())?,
    };
    Ok((model.to_string(), price))
}

pub async fn spend(ctx: &Ctx, args: SpendArgs) -> CliResult {
    let report = ctx.client.spend_report(args.task.as_deref()).await?;
    if ctx.json {
        return output::json(&report);
    }
    let t = &report.total;
    output::line(&format!(
        "{} calls, {} tokens ({} prompt, {} completion), cost {} micro-units",
        t.calls, t.tokens, t.prompt_tokens, t.completion_tokens, t.cost_micros
    ))?;
    for (title, groups) in [
        ("TASK", &report.by_task),
        ("AGENT", &report.by_agent),
        ("MODEL", &report.by_model),
        ("DAY", &report.by_day),
    ] {
        if !groups.is_empty() {
            output::line("")?;
            table(title, groups)?;
        }
    }
    Ok(())
}

fn table(title: &str, groups: &[SpendGroup]) -> CliResult {
    let mut table = Table::new(&[title, "CALLS", "TOKENS", "PROMPT", "COMPLETION", "COST"]);
    for g in groups {
        table.row(vec![
            g.key.clone(),
            g.calls.to_string(),
            g.tokens.to_string(),
            g.prompt_tokens.to_string(),
            g.completion_tokens.to_string(),
            g.cost_micros.to_string(),
        ]);
    }
    table.print()
}

pub async fn budget(ctx: &Ctx, cmd: BudgetCmd) -> CliResult {
    let view = match cmd {
        BudgetCmd::Show => ctx.client.budget().await?,
        BudgetCmd::Set {
            period,
            max_tokens,
            max_cost_micros,
            task_max_tokens,
            task_max_cost_micros,
            warn_percent,
            prices,
        } => {
            let current = ctx.client.budget().await?;
            let budget = BudgetSettings {
                period,
                max_tokens,
                max_cost_micros,
                task_max_tokens,
                task_max_cost_micros,
                warn_percent,
                prices: prices.into_iter().collect(),
            };
            ctx.client
                .set_budget(&budget, Some(current.version))
                .await?
        }
    };
    if ctx.json {
        return output::json(&view);
    }
    show(&view)
}

fn show(v: &BudgetView) -> CliResult {
    let limit = |max: Option<u64>, left: Option<u64>| match (max, left) {
        (Some(m), Some(l)) => format!("{m} ({l} left)"),
        (Some(m), None) => m.to_string(),
        _ => "none".to_string(),
    };
    let b = &v.budget;
    let state = if v.exhausted {
        "SPENT: model calls are refused"
    } else {
        "open"
    };
    output::line(&format!(
        "budget v{} ({state}), period {}: spent {} tokens, {} cost micro-units in {} calls\n\
         team tokens: {}\nteam cost:   {}\ntask tokens: {}\ntask cost:   {}",
        v.version,
        v.period,
        v.spent.tokens,
        v.spent.cost_micros,
        v.spent.calls,
        limit(b.max_tokens, v.remaining_tokens),
        limit(b.max_cost_micros, v.remaining_cost_micros),
        limit(b.task_max_tokens, None),
        limit(b.task_max_cost_micros, None),
    ))
}
