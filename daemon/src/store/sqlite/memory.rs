//! Shared memory: one JSON document per team, changed by merge patch or replacement, with a
//! bounded history of who changed what.

use super::super::error::StoreResult;
use super::super::rules::{self, quota, take_page, MemoryChangeKind};
use super::super::types::{BytePage, Caller, MemoryChange};
use super::rows::{append_event, fmt_time, parse_json};
use super::usage;
use super::writer::WriteCtx;
use crate::config::LimitSettings;
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

pub use super::super::rules::MemoryLimits;

/// Applies an RFC 7396 merge patch (`kind = "merge"`), an RFC 6902 JSON Patch
/// (`"json-patch"`), or replaces the document (`"replace"`).
pub fn change(
    ctx: &mut WriteCtx<'_>,
    caller: &Caller,
    kind: MemoryChangeKind,
    patch: serde_json::Value,
    if_match: Option<i64>,
    limits: MemoryLimits,
    quota_limits: &LimitSettings,
) -> StoreResult<Memory> {
    let current = get(ctx.conn, caller.team_id)?;
    rules::check_version(if_match, current.version)?;
    let (doc, text) = rules::changed_memory(current.doc, kind, &patch, limits)?;
    let old_len: i64 = ctx
        .conn
        .prepare_cached("select octet_length(memory_doc) from teams where id = ?1")?
        .query_row([caller.team_id], |r| r.get(0))?;
    let add = quota::memory_usage(old_len.max(0) as usize, text.len());
    usage::budget(ctx.conn, caller.team_id, quota_limits)?.check(&add)?;
    let version = current.version + 1;
    ctx.conn
        .prepare_cached("update teams set memory_doc = ?2, memory_version = ?3 where id = ?1")?
        .execute(params![caller.team_id, text, version])?;
    ctx.conn
        .prepare_cached(
            "insert into memory_history (team_id, version, agent, kind, patch, created_at) values (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![caller.team_id, version, caller.agent, kind.as_str(), patch.to_string(), ctx.now_ms])?;
    ctx.conn
        .prepare_cached("delete from memory_history where team_id = ?1 and version <= ?2")?
        .execute(params![caller.team_id, version - limits.history as i64])?;
    let change = MemoryChange {
        version,
        agent: caller.agent.clone(),
        kind: kind.as_str().to_string(),
        patch,
        created_at: fmt_time(ctx.now_ms),
    };
    append_event(ctx, caller.team_id, "memory.updated", &change)?;
    Ok(Memory { version, doc })
}

/// Newest first, before `before`; each change is read (and its patch parsed) only when the
/// page has room for the one before it.
pub fn history(
    conn: &Connection,
    team_id: i64,
    before: Option<i64>,
    limit: usize,
    max_bytes: usize,
) -> StoreResult<BytePage<MemoryChange>> {
    let mut stmt = conn.prepare_cached(
        "select version, agent, kind, patch, created_at from memory_history where team_id = ?1 and version < ?2 order by version desc limit ?3",
    )?;
    let before = before.unwrap_or(i64::MAX);
    let rows = stmt.query_map(params![team_id, before, limit as i64], |r| {
        Ok(MemoryChange {
            version: r.get(0)?,
            agent: r.get(1)?,
            kind: r.get(2)?,
            patch: parse_json(&r.get::<_, String>(3)?),
            created_at: fmt_time(r.get(4)?),
        })
    })?;
    Ok(take_page(rows, Some(max_bytes))?)
}
