//! `huddle memory …`: the team's shared JSON document.

use crate::output;
use crate::parse;
use crate::{CliResult, Ctx};
use clap::Subcommand;
use huddle_sdk::wire::Memory;
use serde_json::{json, Value};

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
    /// Set the value at a JSON Pointer, as an RFC 6902 JSON Patch: `replace` when something is
    /// there, `add` when not (`/arr/-` appends). The parent must exist and be an object or an
    /// array; `null` is stored, not a deletion; `/` replaces the whole document. VALUE is JSON,
    /// or taken as a string when it is not valid JSON.
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
    /// Remove the value at a JSON Pointer (an object member or an array element).
    Delete {
        /// Where: a JSON Pointer such as `/test_strategy/old_key` or `/list/0`.
        pointer: String,
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
            let pointer = normalise(&pointer);
            if pointer.is_empty() {
                let memory = ctx.client.replace_memory(&value, if_match).await?;
                return changed(ctx, &memory);
            }
            // `replace` or `add` depends on what is there now: read the version with it, and
            // send the patch only if the document is still at that version (or at --if-match).
            let current = ctx.client.memory().await?;
            let op = if current.doc.pointer(&pointer).is_some() {
                "replace"
            } else {
                "add"
            };
            let ops = json!([{ "op": op, "path": pointer, "value": value }]);
            let version = if_match.unwrap_or(current.version);
            let memory = ctx.client.json_patch_memory(&ops, Some(version)).await?;
            changed(ctx, &memory)
        }
        MemoryCmd::Delete { pointer, if_match } => {
            let pointer = normalise(&pointer);
            if pointer.is_empty() {
                return Err("memory delete needs a pointer below the root (`/key`); to empty the document use `memory set / {}`".into());
            }
            let ops = json!([{ "op": "remove", "path": pointer }]);
            let memory = ctx.client.json_patch_memory(&ops, if_match).await?;
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

/// `a/b` or `/a/b` → `/a/b`; `/` and `` → `` (the whole document).
fn normalise(pointer: &str) -> String {
    let trimmed = pointer.trim().trim_start_matches('/');
    if trimmed.is_empty() {
        String::new()
    } else {
        format!("/{trimmed}")
    }
}

fn changed(ctx: &Ctx, memory: &Memory) -> CliResult {
    if ctx.json {
        output::json(memory)
    } else {
        output::line(&format!("memory is now at version {}", memory.version))
    }
}
