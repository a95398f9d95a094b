//! `huddle status`: the team at a glance — tasks by status, who holds what and for how long,
//! the agents, and the latest messages. The terminal twin of the dashboard.

use crate::output::{self, Table};
use crate::{CliResult, Ctx};
use clap::Args;
use huddle_sdk::wire::{Agent, Message, Task, TaskStatus};
use huddle_sdk::{MessageQuery, TaskQuery};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// How many of the latest messages to show.
    #[arg(long, default_value_t = 5)]
    messages: usize,
}

pub async fn run(ctx: &Ctx, args: StatusArgs) -> CliResult {
    let every_task = TaskQuery::default();
    let (tasks, agents, messages) = tokio::try_join!(
        ctx.client.list_all_tasks(&every_task),
        ctx.client.list_agents(),
        latest_messages(ctx, args.messages),
    )?;
    let counts = counts(&tasks);
    let held: Vec<&Task> = tasks
        .iter()
        .filter(|t| t.status == TaskStatus::InProgress)
        .collect();
    let now = chrono::Utc::now();
    if ctx.json {
        let holders: Vec<_> = held
            .iter()
            .map(|t| {
                json!({
                    "id": t.id, "claimedBy": t.claimed_by, "subject": t.subject,
                    "leaseExpiresAt": t.lease_expires_at,
                    "leaseLeftMs": lease_left_ms(t, now),
                })
            })
            .collect();
        return output::json(&json!({
            "team": ctx.client.team(),
            "tasks": counts,
            "held": holders,
            "agents": agents,
            "messages": messages,
        }));
    }
    let summary: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
    output::line(&format!(
        "team {} · {} tasks: {}",
        ctx.client.team().unwrap_or("-"),
        tasks.len(),
        if summary.is_empty() {
            "none".to_string()
        } else {
            summary.join(" · ")
        }
    ))?;
    if !held.is_empty() {
        output::line("")?;
        let mut table = Table::new(&["HELD BY", "TASK", "LEASE LEFT", "SUBJECT"]);
        for t in &held {
            table.row(vec![
                output::opt(t.claimed_by.as_deref()),
                t.id.clone(),
                lease_left_ms(t, now)
                    .map_or("-".into(), |ms| format!("{:.0}s", ms as f64 / 1000.0)),
                t.subject.clone(),
            ]);
        }
        table.print()?;
    }
    output::line("")?;
    let mut table = Table::new(&["AGENT", "ROLE", "LAST SEEN"]);
    for a in &agents {
        table.row(vec![a.name.clone(), a.role.to_string(), last_seen(a)]);
    }
    table.print()?;
    if !messages.is_empty() {
        output::line("")?;
        let mut table = Table::new(&["SEQ", "TIME", "FROM", "TO", "TYPE", "SUMMARY"]);
        for m in &messages {
            table.row(vec![
                m.seq.to_string(),
                output::clock(&m.created_at).to_string(),
                m.from.clone(),
                m.to.clone(),
                m.kind.clone(),
                m.summary.clone(),
            ]);
        }
        table.print()?;
    }
    Ok(())
}

/// Tasks per status, plus how many pending ones are ready (every blocker completed).
fn counts(tasks: &[Task]) -> BTreeMap<String, usize> {
    let status: HashMap<&str, TaskStatus> =
        tasks.iter().map(|t| (t.id.as_str(), t.status)).collect();
    let mut counts = BTreeMap::new();
    for t in tasks {
        *counts.entry(t.status.to_string()).or_insert(0) += 1;
        let ready = t.status == TaskStatus::Pending
            && t.blocked_by
                .iter()
                .all(|b| status.get(b.as_str()) == Some(&TaskStatus::Completed));
        if ready {
            *counts.entry("ready".to_string()).or_insert(0) += 1;
        }
    }
    counts
}

fn lease_left_ms(task: &Task, now: chrono::DateTime<chrono::Utc>) -> Option<i64> {
    let until = chrono::DateTime::parse_from_rfc3339(task.lease_expires_at.as_deref()?).ok()?;
    Some(
        (until.with_timezone(&chrono::Utc) - now)
            .num_milliseconds()
            .max(0),
    )
}

fn last_seen(agent: &Agent) -> String {
    agent
        .last_seen_at
        .as_deref()
        .map_or_else(|| "never".to_string(), |t| output::clock(t).to_string())
}

/// The last `n` messages. The list is in `seq` order from the start, so this pages through
/// the conversation and keeps the tail.
async fn latest_messages(ctx: &Ctx, n: usize) -> Result<Vec<Message>, huddle_sdk::Error> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let mut all = ctx
        .client
        .list_all_messages(&MessageQuery::default())
        .await?;
    let keep = all.len().saturating_sub(n);
    Ok(all.split_off(keep))
}
