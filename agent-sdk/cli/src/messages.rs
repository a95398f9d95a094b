//! `huddle msg …` and `huddle inbox`: the team message bus.

use crate::output::{self, ColorChoice, Colors, Table};
use crate::parse;
use crate::{CliResult, Ctx};
use clap::{Args, Subcommand};
use futures::StreamExt;
use huddle_sdk::wire::{BatchMessage, Message, PostMessage};
use huddle_sdk::{MessageQuery, MessageSearch, StreamOptions};
use std::time::Duration;

#[derive(Debug, Subcommand)]
pub enum MsgCmd {
    /// Post a message (stored once even if retried).
    Post {
        /// An agent name, a role, or `*` for everyone.
        #[arg(long, default_value = "*")]
        to: String,
        /// test_result, impl_progress, fix_required, error, or any `[a-z][a-z0-9_]{0,63}`.
        #[arg(long = "type")]
        kind: String,
        /// One line for humans.
        summary: String,
        /// A JSON object with the details.
        #[arg(long, value_parser = parse::json)]
        data: Option<serde_json::Value>,
        /// Your own idempotency key (a retry with the same key is stored once); generated
        /// when absent.
        #[arg(long)]
        idempotency_key: Option<String>,
    },
    /// Post many messages in one request, all or none: a JSON Lines file (`-` for standard
    /// input), one `{"to", "type", "summary", "data"?, "idempotencyKey"?}` object per line.
    PostBatch {
        /// The JSON Lines file, or `-`.
        file: String,
    },
    /// List messages in order (all pages, or up to --limit).
    Ls {
        #[command(flatten)]
        filter: Filter,
        /// Only messages after this seq.
        #[arg(long)]
        after: Option<i64>,
        /// At most this many messages.
        #[arg(long)]
        limit: Option<usize>,
    },
    /// Search every message of the team, newest first: words each message contains (as word
    /// starts, any order), and filters. Prints the matches and how many there are in all.
    Search {
        /// The words, e.g. `"TEST-00 average"`; none: every message the filters let through.
        #[arg(default_value = "")]
        words: String,
        #[command(flatten)]
        filter: Filter,
        /// Only messages about this task (`data.taskId` or `data.task`).
        #[arg(long)]
        task: Option<String>,
        /// Only messages created at or after this RFC 3339 time.
        #[arg(long)]
        since: Option<String>,
        /// Only messages created before this RFC 3339 time.
        #[arg(long)]
        until: Option<String>,
        /// Only messages older than this seq (the `next` a previous search printed).
        #[arg(long)]
        before: Option<i64>,
        /// At most this many messages (1–1000).
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Follow the live stream: the conversation so far (or after --after), then every new
    /// message as it is posted, one line each; reconnects by itself without gaps or repeats.
    Tail {
        #[command(flatten)]
        filter: Filter,
        /// Start after this seq.
        #[arg(long)]
        after: Option<i64>,
        /// Colour lines by message type.
        #[arg(long, value_enum, default_value = "auto")]
        color: ColorChoice,
    },
}

/// Filters shared by `msg ls` and `msg tail`.
#[derive(Debug, Args)]
pub struct Filter {
    /// Only messages of this type.
    #[arg(long = "type")]
    kind: Option<String>,
    /// Only messages from this agent.
    #[arg(long)]
    from: Option<String>,
    /// Only messages to this agent name, role or `*`.
    #[arg(long)]
    to: Option<String>,
}

#[derive(Debug, Args)]
pub struct InboxArgs {
    /// Wait up to this long for a first message (e.g. 10s).
    #[arg(long, value_parser = parse::duration)]
    wait: Option<Duration>,
    /// At most this many messages.
    #[arg(long)]
    limit: Option<usize>,
    /// Acknowledge the messages shown, so the next `huddle inbox` starts after them.
    #[arg(long)]
    ack: bool,
}

pub async fn run(ctx: &Ctx, cmd: MsgCmd) -> CliResult {
    match cmd {
        MsgCmd::Post {
            to,
            kind,
            summary,
            data,
            idempotency_key,
        } => {
            let post = PostMessage {
                to,
                kind,
                summary,
                data: data.unwrap_or(serde_json::Value::Null),
            };
            let message = match idempotency_key {
                Some(key) => ctx.client.post_message_with_key(&post, &key).await?.message,
                None => ctx.client.post_message(&post).await?,
            };
            if ctx.json {
                output::json(&message)
            } else {
                output::line(&format!("posted #{} to {}", message.seq, message.to))
            }
        }
        MsgCmd::PostBatch { file } => {
            let messages = read_batch(&file)?;
            let posted = ctx.client.post_messages(&messages).await?;
            if ctx.json {
                output::json(&posted)
            } else {
                let (first, last) = (
                    &posted.messages[0],
                    &posted.messages[posted.messages.len() - 1],
                );
                output::line(&format!(
                    "posted {} messages (#{}–#{}){}",
                    posted.messages.len(),
                    first.seq,
                    last.seq,
                    match posted.replayed.len() {
                        0 => String::new(),
                        n => format!("; {n} already stored under their keys"),
                    }
                ))
            }
        }
        MsgCmd::Ls {
            filter,
            after,
            limit,
        } => {
            let query = MessageQuery {
                after,
                from: filter.from,
                to: filter.to,
                kind: filter.kind,
                limit: limit.map(|l| l.min(1000)),
            };
            let mut messages = match limit {
                Some(_) => ctx.client.list_messages(&query).await?.messages,
                None => ctx.client.list_all_messages(&query).await?,
            };
            messages.truncate(limit.unwrap_or(usize::MAX));
            print_list(ctx, &messages, None)
        }
        MsgCmd::Search {
            words,
            filter,
            task,
            since,
            until,
            before,
            limit,
        } => {
            let search = MessageSearch {
                text: Some(words).filter(|w| !w.trim().is_empty()),
                from: filter.from,
                to: filter.to,
                kind: filter.kind,
                task,
                since,
                until,
                before,
                limit: Some(limit),
            };
            let page = ctx.client.search_messages(&search).await?;
            if ctx.json {
                return output::json(&page);
            }
            print_list(ctx, &page.messages, None)?;
            let shown = page.messages.len();
            match page.next {
                Some(next) => eprintln!(
                    "{shown} of {} matches; older ones: --before {next}",
                    page.total
                ),
                None => eprintln!("{shown} of {} matches", page.total),
            }
            Ok(())
        }
        MsgCmd::Tail {
            filter,
            after,
            color,
        } => {
            let options = StreamOptions {
                after,
                from: filter.from,
                to: filter.to,
                kind: filter.kind,
                idle_timeout: None,
            };
            let mut stream = ctx.client.stream_messages(&options)?;
            let colors = Colors::new(color);
            while let Some(item) = stream.next().await {
                let message = item?;
                if ctx.json {
                    output::json_line(&message)?;
                } else {
                    output::line(&tail_line(&colors, &message))?;
                }
            }
            Ok(())
        }
    }
}

pub async fn inbox(ctx: &Ctx, args: InboxArgs) -> CliResult {
    let list = ctx.client.inbox(args.wait, args.limit).await?;
    let cursor = match (args.ack, list.messages.last()) {
        (true, Some(last)) => Some(ctx.client.ack_inbox(last.seq).await?.cursor),
        _ => None,
    };
    print_list(ctx, &list.messages, cursor)
}

fn print_list(ctx: &Ctx, messages: &[Message], cursor: Option<i64>) -> CliResult {
    if ctx.json {
        let mut doc = serde_json::json!({ "messages": messages });
        if let Some(c) = cursor {
            doc["cursor"] = c.into();
        }
        return output::json(&doc);
    }
    let mut table = Table::new(&["SEQ", "TIME", "FROM", "TO", "TYPE", "SUMMARY"]);
    for m in messages {
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
    if let Some(c) = cursor {
        eprintln!("acknowledged up to #{c}");
    }
    Ok(())
}

/// `#12 10:01:02 tester-1 → coordinator test_result: 41/42 passed`
fn tail_line(colors: &Colors, m: &Message) -> String {
    format!(
        "{} {} → {} {}",
        colors.dim(&format!("#{} {}", m.seq, output::clock(&m.created_at))),
        m.from,
        m.to,
        colors.kind(&m.kind, &format!("{}: {}", m.kind, m.summary)),
    )
}

/// The messages of a JSON Lines file (blank lines skipped); errors name the line.
fn read_batch(file: &str) -> Result<Vec<BatchMessage>, String> {
    let (text, source) = parse::text_input(Some(file))?;
    let mut messages = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let message = serde_json::from_str(line).map_err(|e| format!("{source}:{}: {e}", n + 1))?;
        messages.push(message);
    }
    if messages.is_empty() {
        return Err(format!("{source} holds no messages"));
    }
    Ok(messages)
}
