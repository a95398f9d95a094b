//! `huddle webhook …`: a coordinator's outbound notices (`fix_required`, failed tasks, missed
//! quality gates) to a URL, and their delivery log.

use crate::output::{self, Table};
use crate::{CliResult, Ctx};
use clap::Subcommand;
use huddle_sdk::wire::WebhookTrigger;

#[derive(Debug, Subcommand)]
pub enum WebhookCmd {
    /// Register a URL (a Slack or Discord incoming webhook works as it is). Prints the signing
    /// secret, shown only this once: stdout has the bare secret (or JSON with --json).
    Add {
        /// The receiver's URL (`http`/`https`).
        #[arg(value_name = "URL")]
        target: String,
        /// What to send: fix_required, task_failed, gate_missed, needs_human, gate_rejected,
        /// budget_warning, budget_exceeded (repeat, or comma-separate).
        #[arg(long = "on", value_delimiter = ',', required = true)]
        events: Vec<WebhookTrigger>,
    },
    /// List the team's webhooks.
    Ls,
    /// Delete a webhook: nothing more is sent to it.
    Rm {
        /// The webhook's id (from `huddle webhook ls`).
        id: i64,
    },
    /// The newest deliveries: what was sent, the attempts, how it ended.
    Deliveries {
        /// Only this webhook's.
        #[arg(long)]
        webhook: Option<i64>,
        /// How many of the newest deliveries to show.
        #[arg(long, default_value_t = 20)]
        limit: u32,
    },
}

pub async fn webhook(ctx: &Ctx, cmd: WebhookCmd) -> CliResult {
    match cmd {
        WebhookCmd::Add { target, events } => {
            let hook = ctx.client.create_webhook(&target, &events).await?;
            if ctx.json {
                return output::json(&hook);
            }
            eprintln!(
                "registered webhook {} for {}; its signing secret follows and will not be shown again",
                hook.id,
                names(&hook.events)
            );
            output::line(hook.secret.as_deref().unwrap_or_default())
        }
        WebhookCmd::Ls => {
            let hooks = ctx.client.list_webhooks().await?;
            if ctx.json {
                return output::json(&serde_json::json!({ "webhooks": hooks }));
            }
            let mut table = Table::new(&["ID", "URL", "ON", "BY", "CREATED"]);
            for h in &hooks {
                table.row(vec![
                    h.id.to_string(),
                    h.url.clone(),
                    names(&h.events),
                    h.created_by.clone(),
                    h.created_at.clone(),
                ]);
            }
            table.print()
        }
        WebhookCmd::Rm { id } => {
            ctx.client.delete_webhook(id).await?;
            if ctx.json {
                return output::json(&serde_json::json!({ "deleted": id }));
            }
            output::line(&format!("deleted webhook {id}"))
        }
        WebhookCmd::Deliveries { webhook, limit } => {
            let list = ctx.client.webhook_deliveries(webhook, Some(limit)).await?;
            if ctx.json {
                return output::json(&serde_json::json!({ "deliveries": list }));
            }
            let mut table = Table::new(&["AT", "WEBHOOK", "ON", "TASK", "STATUS", "TRIES", "LAST"]);
            for d in &list {
                let last = match (d.http_status, d.error.as_deref()) {
                    (_, Some(e)) => e.to_string(),
                    (Some(s), None) => s.to_string(),
                    (None, None) => "-".into(),
                };
                table.row(vec![
                    d.at.clone(),
                    d.webhook_id.to_string(),
                    d.trigger.as_str().to_string(),
                    output::opt(d.task_id.as_deref()),
                    d.status.clone(),
                    d.attempts.to_string(),
                    last,
                ]);
            }
            table.print()
        }
    }
}

fn names(events: &[WebhookTrigger]) -> String {
    events
        .iter()
        .map(|e| e.as_str())
        .collect::<Vec<_>>()
        .join(",")
}
