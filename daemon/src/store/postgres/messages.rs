//! The team message bus: posting (idempotent), listing, inbox and acknowledgement.

use super::super::error::{StoreError, StoreResult};
use super::super::rules;
use super::super::rules::quota::RequestQuota;
use super::super::types::{BytePage, Caller, MessageFilter, Posted};
use super::agents::list_agents;
use super::db::Db;
use super::rows::{message_from_row, MESSAGE_COLUMNS};
use super::tx::Tx;
use crate::config::LimitSettings as Limits;
use futures::TryStreamExt;
use huddle_wire::{Message, PostMessage};

/// Posts one message; `quota` is the request's (`None` until its first message is stored).
pub async fn post(
    tx: &mut Tx,
    caller: &Caller,
    post: PostMessage,
    key: Option<String>,
    limits: &Limits,
    quota: &mut Option<RequestQuota>,
) -> StoreResult<Posted> {
    let team_id = caller.team_id;
    let data_text = rules::validate_post(&post, limits)?;
    tx.lock_team(team_id).await?;
    check_recipient(tx, team_id, &post.to).await?;
    // A retry is checked like a first post; under the team lock no other replica can be
    // storing the same key at once.
    if let Some(key) = &key {
        let seq: Option<i64> = sqlx::query_scalar(
            "select seq from idempotency_keys where team_id = $1 and agent = $2 and key = $3",
        )
        .bind(team_id)
        .bind(&caller.agent)
        .bind(key)
        .fetch_optional(tx.conn())
        .await?;
        if let Some(seq) = seq {
            return Ok(Posted {
                message: get(tx.conn(), team_id, seq).await?,
                replayed: true,
            });
        }
    }
    // The request's quota starts from the team's use when its first message is stored.
    let request = match quota {
        Some(q) => q,
        None => quota.insert(RequestQuota::new(tx.budget(team_id, limits).await?)),
    };
    let add = rules::quota::message_usage(&post.summary, &data_text);
    request.add(&add)?;
    let seq = tx.next_msg_seq(team_id);
    let now = tx.now_ms();
    let message = rules::new_message(seq, caller, post, now);
    sqlx::query(&format!(
        "insert into messages (team_id, {MESSAGE_COLUMNS}) values ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
    ))
    .bind(team_id)
    .bind(seq)
    .bind(&message.id)
    .bind(&message.from)
    .bind(&message.to)
    .bind(&message.kind)
    .bind(&message.summary)
    .bind(data_text)
    .bind(now)
    .execute(tx.conn())
    .await?;
    if let Some(key) = &key {
        sqlx::query(
            "insert into idempotency_keys (team_id, agent, key, seq) values ($1, $2, $3, $4)",
        )
        .bind(team_id)
        .bind(&caller.agent)
        .bind(key)
        .bind(seq)
        .execute(tx.conn())
        .await?;
    }
    tx.touch_agent(team_id, &caller.agent);
    tx.count_posted(team_id, add.storage_bytes);
    tx.charge(team_id, &add);
    let json = serde_json::to_string(&message).map_err(|e| StoreError::Internal(e.to_string()))?;
    tx.append_event(team_id, "message.posted", json);
    Ok(Posted {
        message,
        replayed: false,
    })
}

/// Posts each item in order in one transaction: a refused item refuses the batch, named.
pub async fn post_many(
    tx: &mut Tx,
    caller: &Caller,
    items: Vec<(PostMessage, Option<String>)>,
    limits: &Limits,
) -> StoreResult<Vec<Posted>> {
    let mut posted = Vec::with_capacity(items.len());
    let mut quota = None;
    for (i, (message, key)) in items.into_iter().enumerate() {
        posted.push(
            post(tx, caller, message, key, limits, &mut quota)
                .await
                .map_err(|e| rules::at_message(i, e))?,
        );
    }
    Ok(posted)
}

async fn check_recipient(tx: &mut Tx, team_id: i64, to: &str) -> StoreResult<()> {
    if rules::is_group_recipient(to) {
        return Ok(());
    }
    let exists: Option<i32> =
        sqlx::query_scalar("select 1 from agents where team_id = $1 and name = $2")
            .bind(team_id)
            .bind(to)
            .fetch_optional(tx.conn())
            .await?;
    if exists.is_some() {
        return Ok(());
    }
    let known = list_agents(tx.conn(), team_id).await?;
    Err(rules::unknown_recipient(
        to,
        known.into_iter().map(|a| a.name).collect(),
    ))
}

async fn get(conn: Db<'_>, team_id: i64, seq: i64) -> StoreResult<Message> {
    let row = sqlx::query(&format!(
        "select {MESSAGE_COLUMNS} from messages where team_id = $1 and seq = $2"
    ))
    .bind(team_id)
    .bind(seq)
    .fetch_optional(conn)
    .await?
    .ok_or_else(|| StoreError::not_found(format!("message {seq}")))?;
    Ok(message_from_row(&row)?)
}

pub async fn list(db: Db<'_>, team_id: i64, f: &MessageFilter) -> StoreResult<BytePage<Message>> {
    let query = format!(
        "select {MESSAGE_COLUMNS} from messages
         where team_id = $1 and seq > $2
           and ($3::text is null or sender = $3) and ($4::text is null or recipient = $4)
           and ($5::text is null or type = $5)
         order by seq limit $6"
    );
    let rows = sqlx::query(&query)
        .bind(team_id)
        .bind(f.after)
        .bind(&f.from)
        .bind(&f.to)
        .bind(&f.kind)
        .bind(f.limit as i64)
        .fetch(db);
    take_page(rows, f.max_bytes).await
}

/// Rows read one at a time into a page until one does not fit the budget; the rest are
/// drained unread by the driver, never held.
pub(super) async fn take_page(
    mut rows: impl futures::Stream<Item = Result<sqlx::postgres::PgRow, sqlx::Error>> + Unpin,
    max_bytes: Option<usize>,
) -> StoreResult<BytePage<Message>> {
    let mut budget = rules::PageBudget::new(max_bytes);
    let mut items = Vec::new();
    while let Some(row) = rows.try_next().await? {
        let message = message_from_row(&row)?;
        if !budget.fits(&message) {
            return Ok(BytePage { items, cut: true });
        }
        items.push(message);
    }
    Ok(BytePage { items, cut: false })
}

/// Messages to the caller by name, by role or to `*`, past its cursor; its own posts excluded.
pub async fn inbox(
    db: Db<'_>,
    caller: &Caller,
    limit: usize,
    max_bytes: usize,
) -> StoreResult<BytePage<Message>> {
    let query = format!(
        "select {MESSAGE_COLUMNS} from messages
         where team_id = $1
           and seq > (select inbox_cursor from agents where team_id = $1 and name = $2)
           and recipient in ($2, $3, '*') and sender != $2
         order by seq limit $4"
    );
    let rows = sqlx::query(&query)
        .bind(caller.team_id)
        .bind(&caller.agent)
        .bind(caller.role.as_str())
        .bind(limit as i64)
        .fetch(db);
    take_page(rows, Some(max_bytes)).await
}

/// Moves the cursor forward to `seq` (never back); returns the cursor.
pub async fn ack(tx: &mut Tx, caller: &Caller, seq: i64) -> StoreResult<i64> {
    tx.lock_team(caller.team_id).await?;
    rules::check_ack(seq, tx.last_msg_seq(caller.team_id))?;
    Ok(sqlx::query_scalar(
        "update agents set inbox_cursor = greatest(inbox_cursor, $3)
         where team_id = $1 and name = $2 returning inbox_cursor",
    )
    .bind(caller.team_id)
    .bind(&caller.agent)
    .bind(seq)
    .fetch_one(tx.conn())
    .await?)
}

/// Messages of a team in `(after, upto]`, for the listener.
pub async fn range(
    db: impl sqlx::PgExecutor<'_>,
    team_id: i64,
    after: i64,
    upto: i64,
) -> StoreResult<Vec<Message>> {
    let rows = sqlx::query(&format!(
        "select {MESSAGE_COLUMNS} from messages where team_id = $1 and seq > $2 and seq <= $3 order by seq"
    ))
    .bind(team_id)
    .bind(after)
    .bind(upto)
    .fetch_all(db)
    .await?;
    Ok(rows
        .iter()
        .map(message_from_row)
        .collect::<Result<_, _>>()?)
}
