//! Outbound webhooks on PostgreSQL: plain transactions on the pool (they take no team lock:
//! a webhook's row is its own), with the database's clock for leases and times.

use super::super::error::{StoreError, StoreResult};
use super::super::types::Caller;
use super::super::webhooks::{self as rules, Progress, WebhookJob, WebhookStore};
use super::{PostgresStore, DB_NOW_MS};
use async_trait::async_trait;
use huddle_wire::{Webhook, WebhookDelivery, WebhookTrigger};
use sqlx::Row;

#[async_trait]
impl WebhookStore for PostgresStore {
    async fn create_webhook(
        &self,
        caller: &Caller,
        url: &str,
        events: &[WebhookTrigger],
        secret: &str,
        max_per_team: usize,
    ) -> StoreResult<Webhook> {
        let events = rules::events_json(events);
        let mut tx = self.pool.begin().await?;
        // One creation at a time per team, so the cap holds under concurrent requests.
        sqlx::query("select pg_advisory_xact_lock(7461, $1::int)")
            .bind(caller.team_id as i32)
            .execute(tx.db())
            .await?;
        let existing: i64 = sqlx::query_scalar("select count(*) from webhooks where team_id = $1")
            .bind(caller.team_id)
            .fetch_one(tx.db())
            .await?;
        rules::check_count(existing, max_per_team)?;
        let row = sqlx::query(&format!(
            "insert into webhooks (team_id, url, secret, events, created_by, created_at,
                 message_cursor, event_cursor)
             select id, $2, $3, $4, $5, {DB_NOW_MS}, msg_seq, event_seq from teams where id = $1
             returning id, created_at"
        ))
        .bind(caller.team_id)
        .bind(url)
        .bind(secret)
        .bind(&events)
        .bind(&caller.agent)
        .fetch_one(tx.db())
        .await?;
        tx.commit().await?;
        Ok(rules::webhook(
            row.get(0),
            url.to_string(),
            &events,
            caller.agent.clone(),
            row.get(1),
            Some(secret.to_string()),
        ))
    }

    async fn list_webhooks(&self, team_id: i64) -> StoreResult<Vec<Webhook>> {
        let rows = sqlx::query(
            "select id, url, events, created_by, created_at from webhooks
             where team_id = $1 order by id",
        )
        .bind(team_id)
        .fetch_all(self.pool.read().await?.db())
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let events: String = r.get(2);
                rules::webhook(r.get(0), r.get(1), &events, r.get(3), r.get(4), None)
            })
            .collect())
    }

    async fn delete_webhook(&self, team_id: i64, id: i64) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        let gone = sqlx::query("delete from webhooks where team_id = $1 and id = $2")
            .bind(team_id)
            .bind(id)
            .execute(tx.db())
            .await?
            .rows_affected();
        if gone == 0 {
            return Err(StoreError::not_found(format!("webhook {id}")));
        }
        sqlx::query("delete from webhook_deliveries where webhook_id = $1")
            .bind(id)
            .execute(tx.db())
            .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn lease_webhooks(&self, holder: &str, lease_ms: u64) -> StoreResult<Vec<WebhookJob>> {
        let mut tx = self.pool.begin().await?;
        let rows = sqlx::query(&format!(
            "update webhooks w set lease_holder = $1, lease_until = {DB_NOW_MS} + $2
             from teams t
             where t.id = w.team_id
               and (w.lease_holder is null or w.lease_holder = $1 or w.lease_until < {DB_NOW_MS})
             returning w.id, w.team_id, t.name, w.url, w.secret, w.events, w.message_cursor,
                       w.event_cursor"
        ))
        .bind(holder)
        .bind(lease_ms as i64)
        .fetch_all(tx.db())
        .await?;
        tx.commit().await?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let events: String = r.get(5);
                WebhookJob {
                    id: r.get(0),
                    team_id: r.get(1),
                    team: r.get(2),
                    url: r.get(3),
                    secret: r.get(4),
                    events: rules::events_from(&events),
                    message_cursor: r.get(6),
                    event_cursor: r.get(7),
                }
            })
            .collect())
    }

    async fn advance_webhook(
        &self,
        id: i64,
        holder: &str,
        progress: Progress,
    ) -> StoreResult<bool> {
        let mut tx = self.pool.begin().await?;
        let team_id: Option<i64> = sqlx::query_scalar(&format!(
            "update webhooks set message_cursor = greatest(message_cursor, $3),
                 event_cursor = greatest(event_cursor, $4), lease_until = {DB_NOW_MS} + $5
             where id = $1 and lease_holder = $2 returning team_id"
        ))
        .bind(id)
        .bind(holder)
        .bind(progress.cursors.0)
        .bind(progress.cursors.1)
        .bind(progress.lease_ms as i64)
        .fetch_optional(tx.db())
        .await?;
        let Some(team_id) = team_id else {
            return Ok(false);
        };
        for d in &progress.deliveries {
            sqlx::query(&format!(
                "insert into webhook_deliveries (webhook_id, team_id, trigger, seq, task_id,
                     status, attempts, http_status, error, at)
                 values ($1, $2, $3, $4, $5, $6, $7, $8, $9, {DB_NOW_MS})"
            ))
            .bind(id)
            .bind(team_id)
            .bind(d.trigger.as_str())
            .bind(d.seq)
            .bind(&d.task_id)
            .bind(rules::status_text(d.delivered))
            .bind(d.attempts as i64)
            .bind(d.http_status.map(i64::from))
            .bind(&d.error)
            .execute(tx.db())
            .await?;
        }
        sqlx::query(
            "delete from webhook_deliveries where webhook_id = $1 and id <= coalesce(
                 (select id from webhook_deliveries where webhook_id = $1
                  order by id desc limit 1 offset $2), 0)",
        )
        .bind(id)
        .bind(progress.keep as i64)
        .execute(tx.db())
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn webhook_deliveries(
        &self,
        team_id: i64,
        webhook_id: Option<i64>,
        limit: usize,
    ) -> StoreResult<Vec<WebhookDelivery>> {
        let rows = sqlx::query(
            "select id, webhook_id, trigger, seq, task_id, status, attempts, http_status, error, at
             from webhook_deliveries
             where team_id = $1 and ($2::bigint is null or webhook_id = $2)
             order by id desc limit $3",
        )
        .bind(team_id)
        .bind(webhook_id)
        .bind(limit as i64)
        .fetch_all(self.pool.read().await?.db())
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let trigger: String = r.get(2);
                rules::delivery(
                    r.get(0),
                    r.get(1),
                    &trigger,
                    r.get(3),
                    r.get(4),
                    r.get(5),
                    r.get(6),
                    r.get(7),
                    r.get(8),
                    r.get(9),
                )
            })
            .collect())
    }
}
