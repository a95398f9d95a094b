//! `huddle events tail`: every change in the team as it happens (tasks created, claimed,
//! completed; messages; memory; agents), one line each.

use crate::output::{self, ColorChoice, Colors};
use crate::{CliResult, Ctx};
use clap::{Args, Subcommand};
use futures::StreamExt;
use huddle_sdk::wire::Event;
use huddle_sdk::StreamOptions;
use serde_json::Value;

#[derive(Debug, Subcommand)]
pub enum EventsCmd {
    /// Follow the change stream: the history so far (or after --after), then every change as
    /// it happens; reconnects by itself without gaps or repeats.
    Tail(TailArgs),
}

#[derive(Debug, Args)]
pub struct TailArgs {
    /// Only this event type (`task.completed`) or family (`task.`).
    #[arg(long = "type")]
    kind: Option<String>,
    /// Start after this event seq.
    #[arg(long)]
    after: Option<i64>,
    /// Colour lines by event family.
    #[arg(long, value_enum, default_value = "auto")]
    color: ColorChoice,
}

pub async fn run(ctx: &Ctx, cmd: EventsCmd) -> CliResult {
    let EventsCmd::Tail(args) = cmd;
    let options = StreamOptions {
        after: args.after,
        kind: args.kind,
        ..StreamOptions::default()
    };
    let mut stream = ctx.client.stream_events(&options)?;
    let colors = Colors::new(args.color);
    while let Some(item) = stream.next().await {
        let event = item?;
        if ctx.json {
            output::json_line(&event)?;
        } else {
            output::line(&format!(
                "{} {}",
                colors.dim(&format!(
                    "#{} {}",
                    event.seq,
                    output::clock(&event.created_at)
                )),
                colors.kind(&event.kind, &describe(&event)),
            ))?;
        }
    }
    Ok(())
}

/// `task.claimed TEST-001 in_progress by tester-1: Unit tests for auth`, and the like.
pub fn describe(event: &Event) -> String {
    let d = &event.data;
    let text = |key: &str| d.get(key).and_then(Value::as_str).unwrap_or("-");
    let detail = match event.kind.split('.').next() {
        Some("task") => {
            let holder = d
                .get("claimedBy")
                .and_then(Value::as_str)
                .map(|h| format!(" by {h}"))
                .unwrap_or_default();
            format!(
                "{} {}{holder}: {}",
                text("id"),
                text("status"),
                text("subject")
            )
        }
        Some("message") => format!(
            "#{} {} → {} {}: {}",
            d.get("seq").and_then(Value::as_i64).unwrap_or_default(),
            text("from"),
            text("to"),
            text("type"),
            text("summary")
        ),
        Some("memory") => format!(
            "version {} by {} ({})",
            d.get("version").and_then(Value::as_i64).unwrap_or_default(),
            text("agent"),
            text("kind")
        ),
        Some("agent") => format!("{} ({})", text("name"), text("role")),
        _ => d.to_string(),
    };
    format!("{} {detail}", event.kind)
}
