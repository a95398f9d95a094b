//! Outbound webhooks in the store: their definitions, the cursors each one has handled up to,
//! the lease that says which replica sends for it, and the log of deliveries.

use super::error::{StoreError, StoreResult};
use super::rules::fmt_time;
use super::types::Caller;
use async_trait::async_trait;
use huddle_wire::{codes, Webhook, WebhookDelivery, WebhookTrigger};

/// A webhook a replica holds the lease of, with what it needs to send.
#[derive(Debug, Clone)]
pub struct WebhookJob {
    pub id: i64,
    pub team_id: i64,
    pub team: String,
    pub url: String,
    pub secret: String,
    pub events: Vec<WebhookTrigger>,
    /// The message and event `seq` handled up to.
    pub message_cursor: i64,
    pub event_cursor: i64,
}

/// How one notification's sending ended, to record.
#[derive(Debug, Clone)]
pub struct NewDelivery {
    pub trigger: WebhookTrigger,
    pub seq: i64,
    pub task_id: Option<String>,
    pub delivered: bool,
    pub attempts: u32,
    pub http_status: Option<u16>,
    pub error: Option<String>,
}

/// What a replica did for a webhook it holds: the cursors it handled up to, what it sent,
/// how many deliveries to keep, and for how long it keeps the lease.
#[derive(Debug, Clone)]
pub struct Progress {
    pub cursors: (i64, i64),
    pub deliveries: Vec<NewDelivery>,
    pub keep: usize,
    pub lease_ms: u64,
}

/// What a delivery's `status` says.
pub fn status_text(delivered: bool) -> &'static str {
    if delivered {
        "delivered"
    } else {
        "failed"
    }
}

#[async_trait]
pub trait WebhookStore {
    /// Registers a webhook that handles what the team posts from now on. Refused with
    /// `team_limit` when the team has `max_per_team` already.
    async fn create_webhook(
        &self,
        caller: &Caller,
        url: &str,
        events: &[WebhookTrigger],
        secret: &str,
        max_per_team: usize,
    ) -> StoreResult<Webhook>;
    async fn list_webhooks(&self, team_id: i64) -> StoreResult<Vec<Webhook>>;
    /// Removes a webhook and its deliveries; `NotFound` when the team has no such webhook.
    async fn delete_webhook(&self, team_id: i64, id: i64) -> StoreResult<()>;
    /// Takes (or renews) the lease of every webhook whose lease is free, expired or `holder`'s,
    /// for `lease_ms`, and returns them.
    async fn lease_webhooks(&self, holder: &str, lease_ms: u64) -> StoreResult<Vec<WebhookJob>>;
    /// Records deliveries, moves the cursors forward and renews the lease, if `holder` still
    /// holds it (false otherwise: another replica took over and nothing is written). Keeps
    /// the webhook's newest `progress.keep` deliveries.
    async fn advance_webhook(&self, id: i64, holder: &str, progress: Progress)
        -> StoreResult<bool>;
    /// The team's newest deliveries (of one webhook when given), newest first.
    async fn webhook_deliveries(
        &self,
        team_id: i64,
        webhook_id: Option<i64>,
        limit: usize,
    ) -> StoreResult<Vec<WebhookDelivery>>;
}

/// Refuses a new webhook past the team's cap.
pub fn check_count(existing: i64, max_per_team: usize) -> StoreResult<()> {
    if existing as usize >= max_per_team {
        return Err(StoreError::Conflict {
            code: codes::TEAM_LIMIT,
            message: format!(
                "the team has {existing} webhooks, the most [webhooks] max_per_team allows; \
                 delete one first"
            ),
            details: serde_json::json!({ "limit": "[webhooks] max_per_team", "max": max_per_team }),
        });
    }
    Ok(())
}

pub fn events_json(events: &[WebhookTrigger]) -> String {
    serde_json::to_string(events).unwrap_or_else(|_| "[]".into())
}

pub fn events_from(json: &str) -> Vec<WebhookTrigger> {
    serde_json::from_str(json).unwrap_or_default()
}

/// A webhook row as listed (`secret` only when just created).
pub fn webhook(
    id: i64,
    url: String,
    events: &str,
    created_by: String,
    created_at: i64,
    secret: Option<String>,
) -> Webhook {
    Webhook {
        id,
        url,
        events: events_from(events),
        created_by,
        created_at: fmt_time(created_at),
        secret,
    }
}

/// A delivery row as listed.
#[allow(clippy::too_many_arguments)]
pub fn delivery(
    id: i64,
    webhook_id: i64,
    trigger: &str,
    seq: i64,
    task_id: Option<String>,
    status: String,
    attempts: i64,
    http_status: Option<i64>,
    error: Option<String>,
    at: i64,
) -> WebhookDelivery {
    WebhookDelivery {
        id,
        webhook_id,
        trigger: trigger.parse().unwrap_or(WebhookTrigger::FixRequired),
        seq,
        task_id,
        status,
        attempts: attempts.clamp(0, u32::MAX as i64) as u32,
        http_status: http_status.and_then(|s| u16::try_from(s).ok()),
        error,
        at: fmt_time(at),
    }
}
