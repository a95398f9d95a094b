//! Outbound webhooks: each registered webhook follows its team's message bus and event log
//! from its own cursors and `POST`s a signed notice for what it was registered for
//! (`fix_required`, a failed task, a missed quality gate, a question for a person).
//!
//! Delivery is at least once: cursors move forward in the store only after a notice was sent
//! (or every attempt failed, which the delivery log records), so a restart or a replica taking
//! over sends again what was in flight; `x-huddle-delivery` is the same each time, for
//! receivers that deduplicate. A lease per webhook makes one replica send for it at a time.

pub mod address;
pub mod notice;
pub mod public_ip;
pub mod send;

pub use crate::config::WebhookSettings;

use crate::store::webhooks::{NewDelivery, Progress, WebhookJob};
use crate::store::{MessageFilter, Store};
use notice::Notice;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long a replica holds a webhook without renewing it (each notice sent renews it): longer
/// than one notice's attempts take at the default settings.
const LEASE_MS: u64 = 120_000;
/// Messages and events read per look.
const PAGE: usize = 200;

/// Sends webhooks until `stop`; returns when every sending in flight has ended.
pub async fn run(store: Arc<dyn Store>, settings: WebhookSettings, stop: CancellationToken) {
    if !settings.enabled {
        return;
    }
    let holder = format!("huddled-{}", uuid::Uuid::new_v4());
    let busy: Arc<Mutex<HashSet<i64>>> = Arc::default();
    let mut sending = tokio::task::JoinSet::new();
    let mut every = tokio::time::interval(Duration::from_millis(settings.poll_ms.max(10)));
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = every.tick() => {}
            _ = stop.cancelled() => break,
        }
        while sending.try_join_next().is_some() {}
        let jobs = match store.lease_webhooks(&holder, LEASE_MS).await {
            Ok(jobs) => jobs,
            Err(e) => {
                tracing::warn!(error = %e, "webhooks: cannot read the webhooks to send");
                continue;
            }
        };
        for job in jobs {
            if !busy
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(job.id)
            {
                continue;
            }
            let (store, settings, holder, busy, stop) = (
                store.clone(),
                settings.clone(),
                holder.clone(),
                busy.clone(),
                stop.clone(),
            );
            sending.spawn(async move {
                let id = job.id;
                if let Err(e) = follow(&*store, &settings, &holder, job, &stop).await {
                    tracing::warn!(webhook = id, error = %e, "webhooks: sending stopped; retried at the next look");
                }
                busy.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
            });
        }
    }
    sending.shutdown().await;
}

/// Sends what is new for one webhook and moves its cursors past it.
async fn follow(
    store: &dyn Store,
    settings: &WebhookSettings,
    holder: &str,
    job: WebhookJob,
    stop: &CancellationToken,
) -> crate::store::StoreResult<()> {
    let mut cursors = (job.message_cursor, job.event_cursor);
    let messages = store
        .list_messages(
            job.team_id,
            MessageFilter {
                after: cursors.0,
                limit: PAGE,
                ..MessageFilter::default()
            },
        )
        .await?
        .items;
    let mut notices: Vec<(Notice, (i64, i64))> = Vec::new();
    for m in &messages {
        cursors.0 = cursors.0.max(m.seq);
        if let Some(n) = notice::from_message(m) {
            notices.push((n, cursors));
        }
    }
    let events = store.list_events(job.team_id, cursors.1, PAGE).await?;
    for e in &events {
        cursors.1 = cursors.1.max(e.seq);
        if let Some(n) = notice::from_event(e) {
            notices.push((n, cursors));
        }
    }
    for (n, at) in notices {
        if stop.is_cancelled() {
            return Ok(());
        }
        if !job.events.contains(&n.trigger) {
            continue;
        }
        let delivery_id = format!("{}-{}-{}", job.id, n.stream, n.seq);
        let outcome = send::deliver(
            settings,
            &job.url,
            &job.secret,
            &delivery_id,
            n.trigger.as_str(),
            &notice::payload(&job.team, &n, &settings.public_url),
            stop,
        )
        .await;
        if stop.is_cancelled() && !outcome.delivered {
            return Ok(());
        }
        if !outcome.delivered {
            tracing::warn!(webhook = job.id, delivery = %delivery_id, error = ?outcome.error, "webhooks: a notice could not be delivered");
        }
        let delivery = NewDelivery {
            trigger: n.trigger,
            seq: n.seq,
            task_id: n.task_id.clone(),
            delivered: outcome.delivered,
            attempts: outcome.attempts,
            http_status: outcome.http_status,
            error: outcome.error,
        };
        if !advance(store, settings, holder, job.id, at, vec![delivery]).await? {
            return Ok(());
        }
    }
    if cursors != (job.message_cursor, job.event_cursor) {
        advance(store, settings, holder, job.id, cursors, Vec::new()).await?;
    }
    Ok(())
}

async fn advance(
    store: &dyn Store,
    settings: &WebhookSettings,
    holder: &str,
    id: i64,
    cursors: (i64, i64),
    deliveries: Vec<NewDelivery>,
) -> crate::store::StoreResult<bool> {
    store
        .advance_webhook(
            id,
            holder,
            Progress {
                cursors,
                deliveries,
                keep: settings.keep_deliveries.max(1),
                lease_ms: LEASE_MS,
            },
        )
        .await
}
