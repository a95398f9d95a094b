//! Outbound webhooks on SQLite: definitions, leases and the delivery log go through the
//! writer like every write; listings through the read pool.

use super::super::error::{StoreError, StoreResult};
use super::super::types::Caller;
use super::super::webhooks::{self as rules, Progress, WebhookJob, WebhookStore};
use super::SqliteStore;
use async_trait::async_trait;
use huddle_wire::{Webhook, WebhookDelivery, WebhookTrigger};
use rusqlite::params;

#[async_trait]
impl WebhookStore for SqliteStore {
    async fn create_webhook(
        &self,
        caller: &Caller,
        url: &str,
        events: &[WebhookTrigger],
        secret: &str,
        max_per_team: usize,
    ) -> StoreResult<Webhook> {
        let (team_id, agent) = (caller.team_id, caller.agent.clone());
        let (url, secret, events) = (
            url.to_string(),
            secret.to_string(),
            rules::events_json(events),
        );
        self.writer()?
            .write(move |ctx| {
                let existing: i64 = ctx
                    .conn
                    .prepare_cached("select count(*) from webhooks where team_id = ?1")?
                    .query_row([team_id], |r| r.get(0))?;
                rules::check_count(existing, max_per_team)?;
                ctx.conn
                    .prepare_cached(
                        "insert into webhooks (team_id, url, secret, events, created_by, created_at,
                             message_cursor, event_cursor)
                         select team_id, ?2, ?3, ?4, ?5, ?6, msg_seq, event_seq from team_seqs
                         where team_id = ?1",
                    )?
                    .execute(params![team_id, url, secret, events, agent, ctx.now_ms])?;
                let id = ctx.conn.last_insert_rowid();
                Ok(rules::webhook(
                    id,
                    url,
                    &events,
                    agent,
                    ctx.now_ms,
                    Some(secret),
                ))
            })
            .await
    }

    async fn list_webhooks(&self, team_id: i64) -> StoreResult<Vec<Webhook>> {
        self.readers
            .read(move |conn| {
                let mut stmt = conn.prepare_cached(
                    "select id, url, events, created_by, created_at from webhooks
                     where team_id = ?1 order by id",
                )?;
                let rows = stmt.query_map([team_id], |r| {
                    let events: String = r.get(2)?;
                    Ok(rules::webhook(
                        r.get(0)?,
                        r.get(1)?,
                        &events,
                        r.get(3)?,
                        r.get(4)?,
                        None,
                    ))
                })?;
                Ok(rows.collect::<Result<_, _>>()?)
            })
            .await
    }

    async fn delete_webhook(&self, team_id: i64, id: i64) -> StoreResult<()> {
        self.writer()?
            .write(move |ctx| {
                let gone = ctx
                    .conn
                    .prepare_cached("delete from webhooks where team_id = ?1 and id = ?2")?
                    .execute(params![team_id, id])?;
                if gone == 0 {
                    return Err(StoreError::not_found(format!("webhook {id}")));
                }
                ctx.conn
                    .prepare_cached("delete from webhook_deliveries where webhook_id = ?1")?
                    .execute([id])?;
                Ok(())
            })
            .await
    }

    async fn lease_webhooks(&self, holder: &str, lease_ms: u64) -> StoreResult<Vec<WebhookJob>> {
        let holder = holder.to_string();
        self.writer()?
            .write(move |ctx| {
                let until = ctx.now_ms + lease_ms as i64;
                let mut stmt = ctx.conn.prepare_cached(
                    "update webhooks set lease_holder = ?1, lease_until = ?2
                     where lease_holder is null or lease_holder = ?1 or lease_until < ?3
                     returning id, team_id, (select name from teams t where t.id = team_id),
                               url, secret, events, message_cursor, event_cursor",
                )?;
                let rows = stmt.query_map(params![holder, until, ctx.now_ms], |r| {
                    let events: String = r.get(5)?;
                    Ok(WebhookJob {
                        id: r.get(0)?,
                        team_id: r.get(1)?,
                        team: r.get(2)?,
                        url: r.get(3)?,
                        secret: r.get(4)?,
                        events: rules::events_from(&events),
                        message_cursor: r.get(6)?,
                        event_cursor: r.get(7)?,
                    })
                })?;
                Ok(rows.collect::<Result<_, _>>()?)
            })
            .await
    }

    async fn advance_webhook(
        &self,
        id: i64,
        holder: &str,
        progress: Progress,
    ) -> StoreResult<bool> {
        let holder = holder.to_string();
        self.writer()?
            .write(move |ctx| {
                let team_id: Option<i64> = ctx
                    .conn
                    .prepare_cached(
                        "update webhooks set message_cursor = max(message_cursor, ?3),
                             event_cursor = max(event_cursor, ?4), lease_until = ?5
                         where id = ?1 and lease_holder = ?2 returning team_id",
                    )?
                    .query_row(
                        params![
                            id,
                            holder,
                            progress.cursors.0,
                            progress.cursors.1,
                            ctx.now_ms + progress.lease_ms as i64
                        ],
                        |r| r.get(0),
                    )
                    .map(Some)
                    .or_else(|e| match e {
                        rusqlite::Error::QueryReturnedNoRows => Ok(None),
                        e => Err(e),
                    })?;
                let Some(team_id) = team_id else {
                    return Ok(false);
                };
                let mut insert = ctx.conn.prepare_cached(
                    "insert into webhook_deliveries (webhook_id, team_id, trigger, seq, task_id,
                         status, attempts, http_status, error, at)
                     values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                )?;
                for d in &progress.deliveries {
                    insert.execute(params![
                        id,
                        team_id,
                        d.trigger.as_str(),
                        d.seq,
                        d.task_id,
                        rules::status_text(d.delivered),
                        d.attempts,
                        d.http_status,
                        d.error,
                        ctx.now_ms
                    ])?;
                }
                ctx.conn
                    .prepare_cached(
                        "delete from webhook_deliveries where webhook_id = ?1 and id <= coalesce(
                             (select id from webhook_deliveries where webhook_id = ?1
                              order by id desc limit 1 offset ?2), 0)",
                    )?
                    .execute(params![id, progress.keep as i64])?;
                Ok(true)
            })
            .await
    }

    async fn webhook_deliveries(
        &self,
        team_id: i64,
        webhook_id: Option<i64>,
        limit: usize,
    ) -> StoreResult<Vec<WebhookDelivery>> {
        self.readers
            .read(move |conn| {
                let mut stmt = conn.prepare_cached(
                    "select id, webhook_id, trigger, seq, task_id, status, attempts, http_status,
                         error, at
                     from webhook_deliveries
                     where team_id = ?1 and (?2 is null or webhook_id = ?2)
                     order by id desc limit ?3",
                )?;
                let rows = stmt.query_map(params![team_id, webhook_id, limit as i64], |r| {
                    let trigger: String = r.get(2)?;
                    Ok(rules::delivery(
                        r.get(0)?,
                        r.get(1)?,
                        &trigger,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                        r.get(6)?,
                        r.get(7)?,
                        r.get(8)?,
                        r.get(9)?,
                    ))
                })?;
                Ok(rows.collect::<Result<_, _>>()?)
            })
            .await
    }
}
