//! Shared memory: one JSON document per team, changed by merge patch or replacement, with a
//! bounded history of who changed what.

use super::super::{Caller, MemoryChange, StoreError, StoreResult};
use super::rows::{append_event, fmt_time, parse_json};
use super::writer::WriteCtx;
use huddle_wire::Memory;
use rusqlite::{params, Connection};

pub fn get(conn: &Connection, team_id: i64) -> StoreResult<Memory> {
    Ok(conn
        .prepare_cached("select memory_version, memory_doc from teams where id = ?1")?
        .query_row([team_id], |r| {
            Ok(Memory {
                version: r.get(0)?,
                doc: parse_json(&r.get::<_, String>(1)?),
            })
        })?)
}

/// Applies RFC 6902 operations to `doc`, all or none; an error names the operation, its path
/// and what is wrong there in words ("/arr is a string, not an object or array").
fn apply_ops(
    mut doc: serde_json::Value,
    ops: &serde_json::Value,
) -> StoreResult<serde_json::Value> {
    let parsed: json_patch::Patch = serde_json::from_value(ops.clone()).map_err(|e| {
        StoreError::invalid(
            "patch",
            format!("a JSON Patch is a list of {{\"op\", \"path\", \"value\"?, \"from\"?}} operations: {e}"),
        )
    })?;
    let before = doc.clone();
    json_patch::patch(&mut doc, &parsed).map_err(|e| {
        let why = explain(&before, &e.path.to_string());
        StoreError::invalid(
            "patch",
            format!("operation {} at {}: {}{why}", e.operation, e.path, e.kind),
        )
    })?;
    Ok(doc)
}

/// What is at a failed path's parent, when that explains the failure.
fn explain(doc: &serde_json::Value, path: &str) -> String {
    let parent = path.rsplit_once('/').map_or("", |(p, _)| p);
    match doc.pointer(parent) {
        None => format!(
            " ({} does not exist)",
            if parent.is_empty() { "/" } else { parent }
        ),
        Some(v) if !v.is_object() && !v.is_array() => {
            let kind = match v {
                serde_json::Value::String(_) => "a string",
                serde_json::Value::Number(_) => "a number",
                serde_json::Value::Bool(_) => "a boolean",
                _ => "null",
            };
            format!(" ({parent} is {kind}, not an object or array)")
        }
        Some(_) => String::new(),
    }
}

/// Limits for a change: the document's size cap and how many history entries to keep.
#[derive(Debug, Clone, Copy)]
pub struct MemoryLimits {
    pub max_depth: usize,
    pub max_bytes: usize,
    pub history: usize,
}

/// Applies an RFC 7396 merge patch (`kind = "merge"`), an RFC 6902 JSON Patch
/// (`"json-patch"`), or replaces the document (`"replace"`).
pub fn change(
    ctx: &mut WriteCtx<'_>,
    caller: &Caller,
    kind: &str,
    patch: serde_json::Value,
    if_match: Option<i64>,
    limits: MemoryLimits,
) -> StoreResult<Memory> {
    let current = get(ctx.conn, caller.team_id)?;
    if let Some(expected) = if_match {
        if expected != current.version {
            return Err(StoreError::StaleVersion {
                expected,
                current: current.version,
            });
        }
    }
    let doc = match kind {
        "merge" => {
            let mut doc = current.doc;
            json_patch::merge(&mut doc, &patch);
            doc
        }
        "json-patch" => apply_ops(current.doc, &patch)?,
        _ => patch.clone(),
    };
    if !doc.is_object() {
        return Err(StoreError::invalid(
            "doc",
            "the shared memory document must stay a JSON object",
        ));
    }
    crate::validate::depth("doc", &doc, limits.max_depth)?;
    let text = doc.to_string();
    if text.len() > limits.max_bytes {
        return Err(StoreError::TooLarge {
            message: format!(
                "the shared memory document would be {} bytes; the limit is {}",
                text.len(),
                limits.max_bytes
            ),
        });
    }
    let version = current.version + 1;
    ctx.conn
        .prepare_cached("update teams set memory_doc = ?2, memory_version = ?3 where id = ?1")?
        .execute(params![caller.team_id, text, version])?;
    ctx.conn
        .prepare_cached(
            "insert into memory_history (team_id, version, agent, kind, patch, created_at) values (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![caller.team_id, version, caller.agent, kind, patch.to_string(), ctx.now_ms])?;
    ctx.conn
        .prepare_cached("delete from memory_history where team_id = ?1 and version <= ?2")?
        .execute(params![caller.team_id, version - limits.history as i64])?;
    let change = MemoryChange {
        version,
        agent: caller.agent.clone(),
        kind: kind.to_string(),
        patch,
        created_at: fmt_time(ctx.now_ms),
    };
    append_event(ctx, caller.team_id, "memory.updated", &change)?;
    Ok(Memory { version, doc })
}

pub fn history(conn: &Connection, team_id: i64, limit: usize) -> StoreResult<Vec<MemoryChange>> {
    let mut stmt = conn.prepare_cached(
        "select version, agent, kind, patch, created_at from memory_history where team_id = ?1 order by version desc limit ?2",
    )?;
    let rows = stmt.query_map(params![team_id, limit as i64], |r| {
        Ok(MemoryChange {
            version: r.get(0)?,
            agent: r.get(1)?,
            kind: r.get(2)?,
            patch: parse_json(&r.get::<_, String>(3)?),
            created_at: fmt_time(r.get(4)?),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
