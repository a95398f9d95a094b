//! `huddle memory …`: the team's shared JSON document.

use crate::output;
use crate::parse;
use crate::{CliResult, Ctx};
use clap::Subcommand;
use huddle_sdk::wire::Memory;
use serde_json::{Map, Value};

#[derive(Debug, Subcommand)]
pub enum MemoryCmd {
    /// Print the document, or the value at a JSON Pointer (`/test_strategy/test_framework`).
    Get {
        /// A JSON Pointer; the whole document when absent.
        pointer: Option<String>,
    },
    /// Apply an RFC 7396 merge patch read from FILE, or from stdin when FILE is absent or `-`.
    Patch {
        /// The file holding the patch; standard input when absent or `-`.
        file: Option<String>,
        /// The version you read (412 if it moved on).
        #[arg(long)]
        if_match: Option<i64>,
    },
    /// Set the value at a JSON Pointer (objects along the way are created); `/` replaces the
    /// whole document. VALUE is JSON, or taken as a string when it is not valid JSON.
    Set {
        /// Where to set it: a JSON Pointer (`/test_strategy/framework`), `/` for the whole
        /// document.
        pointer: String,
        /// The value: JSON, or a plain string when it is not valid JSON.
        value: String,
        /// Always take VALUE as a string (`--string 42` stores "42").
        #[arg(long)]
        string: bool,
        /// The version you read (412 if it moved on).
        #[arg(long)]
        if_match: Option<i64>,
    },
    /// Recent changes: who changed what, newest first.
    History {
        /// At most this many changes.
        #[arg(long)]
        limit: Option<usize>,
    },
}

pub async fn run(ctx: &Ctx, cmd: MemoryCmd) -> CliResult {
    match cmd {
        MemoryCmd::Get { pointer } => match pointer.as_deref().map(|p| p.trim_start_matches('/')) {
            None | Some("") => {
                let memory = ctx.client.memory().await?;
                if ctx.json {
                    output::json(&memory)
                } else {
                    output::json(&memory.doc)
                }
            }
            Some(_) => {
                let value = ctx
                    .client
                    .memory_at(pointer.as_deref().unwrap_or(""))
                    .await?;
                output::json(&value)
            }
        },
        MemoryCmd::Patch { file, if_match } => {
            let patch = parse::json_input(file.as_deref())?;
            let memory = ctx.client.patch_memory(&patch, if_match).await?;
            changed(ctx, &memory)
        }
        MemoryCmd::Set {
            pointer,
            value,
            string,
            if_match,
        } => {
            let value = if string {
                Value::String(value)
            } else {
                parse::json_or_string(&value)
            };
            let segments: Vec<String> = pointer
                .trim_start_matches('/')
                .split('/')
                .filter(|s| !s.is_empty())
                .map(|s| s.replace("~1", "/").replace("~0", "~"))
                .collect();
            let memory = if segments.is_empty() {
                ctx.client.replace_memory(&value, if_match).await?
            } else {
                ctx.client
                    .patch_memory(&nest(&segments, value), if_match)
                    .await?
            };
            changed(ctx, &memory)
        }
        MemoryCmd::History { limit } => {
            let history = ctx.client.memory_history(limit).await?;
            if ctx.json {
                return output::json(&history);
            }
            let mut table = output::Table::new(&["VERSION", "TIME", "AGENT", "KIND", "CHANGE"]);
            for c in &history.changes {
                table.row(vec![
                    c.version.to_string(),
                    output::clock(&c.created_at).to_string(),
                    c.agent.clone(),
                    c.kind.clone(),
                    c.patch.to_string(),
                ]);
            }
            table.print()
        }
    }
}

/// `{"a": {"b": value}}` for segments `a`, `b`: a merge patch that sets one value.
fn nest(segments: &[String], value: Value) -> Value {
    segments.iter().rev().fold(value, |inner, key| {
        let mut map = Map::new();
        map.insert(key.clone(), inner);
        Value::Object(map)
    })
}

fn changed(ctx: &Ctx, memory: &Memory) -> CliResult {
    if ctx.json {
        output::json(memory)
    } else {
        output::line(&format!("memory is now at version {}", memory.version))
    }
}
