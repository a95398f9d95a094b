//! The team message bus: posting (idempotent), listing, inbox and acknowledgement.

use super::super::error::{StoreError, StoreResult};
use super::super::rules;
use super::super::rules::quota::RequestQuota;
use super::super::types::{BytePage, Caller, MessageFilter, Posted};
use super::rows::{append_event_json, message_from_row, touch_agent, MESSAGE_COLUMNS};
use super::usage;
use super::writer::WriteCtx;
use crate::config::LimitSettings as Limits;
use crate::hub::{Publish, StreamItem};
use huddle_wire::{Message, PostMessage};
use rusqlite::{params, Connection, OptionalExtension};
use std::sync::Arc;

/// Posts one message (`quota`: the request's, from [`one_post_quota`] or the batch's).
pub fn post(
    ctx: &mut WriteCtx<'_>,
    caller: &Caller,
    post: PostMessage,
    key: Option<String>,
    limits: &Limits,
    quota: &mut RequestQuota,
) -> StoreResult<Posted> {
    let team_id = caller.team_id;
    let data_text = rules::validate_post(&post, limits)?;
    check_recipient(ctx.conn, team_id, &post.to)?;
    // A retry is checked like a first post: a malformed request is refused, key or no key.
    if let Some(key) = &key {
        if let Some(seq) = ctx
            .conn
            .prepare_cached(
                "select seq from idempotency_keys where team_id = ?1 and agent = ?2 and key = ?3",
            )?
            .query_row(params![team_id, caller.agent, key], |r| r.get::<_, i64>(0))
            .optional()?
        {
            let message = get(ctx.conn, team_id, seq)?;
            return Ok(Posted {
                message,
                replayed: true,
            });
        }
    }
    quota.add(&rules::quota::message_usage(&post.summary, &data_text))?;
    let seq = ctx.next_msg_seq(team_id)?;
    let message = rules::new_message(seq, caller, post, ctx.now_ms);
    ctx.conn
        .prepare_cached(&format!("insert into messages (team_id, {MESSAGE_COLUMNS}) values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"))?
        .execute(params![
            team_id,
            seq,
            message.id,
            message.from,
            message.to,
            message.kind,
            message.summary,
            data_text,
            ctx.now_ms
        ])?;
    if let Some(key) = &key {
        ctx.conn
            .prepare_cached(
                "insert into idempotency_keys (team_id, agent, key, seq) values (?1, ?2, ?3, ?4)",
            )?
            .execute(params![team_id, caller.agent, key, seq])?;
    }
    touch_agent(ctx, team_id, &caller.agent)?;
    // Serialised once: the event log, the event stream and the message stream share the text.
    let json = serde_json::to_string(&message).map_err(|e| StoreError::Internal(e.to_string()))?;
    append_event_json(ctx, team_id, "message.posted", json.clone())?;
    ctx.publish(
        team_id,
        Publish::Message(Arc::new(StreamItem::new(
            seq,
            message.kind.clone(),
            message.from.clone(),
            message.to.clone(),
            json.into(),
        ))),
    );
    Ok(Posted {
        message,
        replayed: false,
    })
}

/// The quota of a request posting one message.
pub fn one_post_quota(
    ctx: &WriteCtx<'_>,
    team_id: i64,
    limits: &Limits,
) -> StoreResult<RequestQuota> {
    Ok(RequestQuota::new(usage::budget(ctx.conn, team_id, limits)?))
}

/// Posts each item in order inside the caller's one job, so a refused item rolls back the
/// whole batch; the error names the item.
pub fn post_many(
    ctx: &mut WriteCtx<'_>,
    caller: &Caller,
    items: Vec<(PostMessage, Option<String>)>,
    limits: &Limits,
) -> StoreResult<Vec<Posted>> {
    let mut posted = Vec::with_capacity(items.len());
    let mut quota = RequestQuota::new(usage::budget(ctx.conn, caller.team_id, limits)?);
    for (i, (message, key)) in items.into_iter().enumerate() {
        posted.push(
            post(ctx, caller, message, key, limits, &mut quota)
                .map_err(|e| rules::at_message(i, e))?,
        );
    }
    Ok(posted)
}

/// `to` must reach someone: an agent of the team, a role, or `*`. Otherwise the error lists who
/// can be reached, because a message to nobody is silently lost work.
fn check_recipient(conn: &Connection, team_id: i64, to: &str) -> StoreResult<()> {
    if rules::is_group_recipient(to) {
        return Ok(());
    }
    let exists = conn
        .prepare_cached("select 1 from agents where team_id = ?1 and name = ?2")?
        .query_row(params![team_id, to], |_| Ok(()))
        .optional()?
        .is_some();
    if exists {
        return Ok(());
    }
    let known = super::agents::list_agents(conn, team_id)?;
    Err(rules::unknown_recipient(
        to,
        known.into_iter().map(|a| a.name).collect(),
    ))
}

fn get(conn: &Connection, team_id: i64, seq: i64) -> StoreResult<Message> {
    conn.prepare_cached(&format!(
        "select {MESSAGE_COLUMNS} from messages where team_id = ?1 and seq = ?2"
    ))?
    .query_row(params![team_id, seq], message_from_row)
    .optional()?
    .ok_or_else(|| StoreError::not_found(format!("message {seq}")))
}

pub fn list(conn: &Connection, team_id: i64, f: &MessageFilter) -> StoreResult<BytePage<Message>> {
    let mut stmt = conn.prepare_cached(&format!(
        "select {MESSAGE_COLUMNS} from messages
         where team_id = ?1 and seq > ?2
           and (?3 is null or sender = ?3) and (?4 is null or recipient = ?4) and (?5 is null or type = ?5)
         order by seq limit ?6"
    ))?;
    let rows = stmt.query_map(
        params![team_id, f.after, f.from, f.to, f.kind, f.limit as i64],
        message_from_row,
    )?;
    Ok(rules::take_page(rows, f.max_bytes)?)
}

/// Messages to the caller by name, by role or to `*`, past its cursor; its own posts excluded.
pub fn inbox(
    conn: &Connection,
    caller: &Caller,
    limit: usize,
    max_bytes: usize,
) -> StoreResult<BytePage<Message>> {
    let cursor: i64 = conn
        .prepare_cached("select inbox_cursor from agents where team_id = ?1 and name = ?2")?
        .query_row(params![caller.team_id, caller.agent], |r| r.get(0))?;
    let mut stmt = conn.prepare_cached(&format!(
        "select {MESSAGE_COLUMNS} from messages
         where team_id = ?1 and seq > ?2 and recipient in (?3, ?4, '*') and sender != ?3
         order by seq limit ?5"
    ))?;
    let rows = stmt.query_map(
        params![
            caller.team_id,
            cursor,
            caller.agent,
            caller.role.as_str(),
            limit as i64
        ],
        message_from_row,
    )?;
    Ok(rules::take_page(rows, Some(max_bytes))?)
}

/// Moves the cursor forward to `seq` (never back); returns the cursor.
pub fn ack(ctx: &mut WriteCtx<'_>, caller: &Caller, seq: i64) -> StoreResult<i64> {
    let last = ctx.last_msg_seq(caller.team_id)?;
    rules::check_ack(seq, last)?;
    Ok(ctx
        .conn
        .prepare_cached(
            "update agents set inbox_cursor = max(inbox_cursor, ?3) where team_id = ?1 and name = ?2 returning inbox_cursor",
        )?
        .query_row(params![caller.team_id, caller.agent, seq], |r| r.get(0))?)
}
