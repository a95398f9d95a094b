//! Shared memory: one JSON document per team with a bounded history of changes.

use super::super::error::StoreResult;
use super::super::rules::{self, fmt_time, parse_json, quota, MemoryChangeKind, MemoryLimits};
use super::super::types::{BytePage, Caller, MemoryChange};
use super::rows::append_event;
use super::tx::Tx;
use crate::config::LimitSettings;
use futures::TryStreamExt;
use huddle_wire::Memory;

pub async fn get(conn: impl sqlx::PgExecutor<'_>, team_id: i64) -> StoreResult<Memory> {
    let (version, doc): (i64, String) =
        sqlx::query_as("select memory_version, memory_doc from teams where id = $1")
            .bind(team_id)
            .fetch_one(conn)
            .await?;
    Ok(Memory {
        version,
        doc: parse_json(&doc),
    })
}

/// The document and its stored size in bytes.
async fn get_with_len(
    conn: impl sqlx::PgExecutor<'_>,
    team_id: i64,
) -> StoreResult<(Memory, usize)> {
    let (version, doc, len): (i64, String, i32) = sqlx::query_as(
        "select memory_version, memory_doc, octet_length(memory_doc) from teams where id = $1",
    )
    .bind(team_id)
    .fetch_one(conn)
    .await?;
    let memory = Memory {
        version,
        doc: parse_json(&doc),
    };
    Ok((memory, len.max(0) as usize))
}

/// Applies a change under the team lock: the version check and the write are one step on
/// every replica.
pub async fn change(
    tx: &mut Tx,
    caller: &Caller,
    kind: MemoryChangeKind,
    patch: serde_json::Value,
    if_match: Option<i64>,
    limits: MemoryLimits,
    quota_limits: &LimitSettings,
) -> StoreResult<Memory> {
    let team_id = caller.team_id;
    tx.lock_team(team_id).await?;
    let (current, old_len) = get_with_len(tx.conn(), team_id).await?;
    rules::check_version(if_match, current.version)?;
    let (doc, text) = rules::changed_memory(current.doc, kind, &patch, limits)?;
    let add = quota::memory_usage(old_len, text.len());
    tx.budget(team_id, quota_limits).await?.check(&add)?;
    tx.charge(team_id, &add);
    let version = current.version + 1;
    let now = tx.now_ms();
    sqlx::query("update teams set memory_doc = $2, memory_version = $3 where id = $1")
        .bind(team_id)
        .bind(text)
        .bind(version)
        .execute(tx.conn())
        .await?;
    sqlx::query(
        "insert into memory_history (team_id, version, agent, kind, patch, created_at)
         values ($1, $2, $3, $4, $5, $6)",
    )
    .bind(team_id)
    .bind(version)
    .bind(&caller.agent)
    .bind(kind.as_str())
    .bind(patch.to_string())
    .bind(now)
    .execute(tx.conn())
    .await?;
    sqlx::query("delete from memory_history where team_id = $1 and version <= $2")
        .bind(team_id)
        .bind(version - limits.history as i64)
        .execute(tx.conn())
        .await?;
    let change = MemoryChange {
        version,
        agent: caller.agent.clone(),
        kind: kind.as_str().to_string(),
        patch,
        created_at: fmt_time(now),
    };
    append_event(tx, team_id, "memory.updated", &change)?;
    Ok(Memory { version, doc })
}

/// Newest first, before `before`; each change is read (and its patch parsed) only when the
/// page has room for the one before it.
pub async fn history(
    conn: impl sqlx::PgExecutor<'_>,
    team_id: i64,
    before: Option<i64>,
    limit: usize,
    max_bytes: usize,
) -> StoreResult<BytePage<MemoryChange>> {
    let mut rows = sqlx::query_as::<_, (i64, String, String, String, i64)>(
        "select version, agent, kind, patch, created_at from memory_history
         where team_id = $1 and version < $2 order by version desc limit $3",
    )
    .bind(team_id)
    .bind(before.unwrap_or(i64::MAX))
    .bind(limit as i64)
    .fetch(conn);
    let mut budget = rules::PageBudget::new(Some(max_bytes));
    let mut items = Vec::new();
    while let Some((version, agent, kind, patch, at)) = rows.try_next().await? {
        let change = MemoryChange {
            version,
            agent,
            kind,
            patch: parse_json(&patch),
            created_at: fmt_time(at),
        };
        if !budget.fits(&change) {
            return Ok(BytePage { items, cut: true });
        }
        items.push(change);
    }
    Ok(BytePage { items, cut: false })
}
