//! The retention sweeper: every `[retention] every_ms`, deletes what the policy no longer
//! keeps in small writes (`Store::prune`, at most `batch` rows of a kind each), one after
//! another until nothing is left, yielding between them so other writes go first.

use crate::config::RetentionSettings;
use crate::store::retention::RetentionPolicy;
use crate::store::Store;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The store's policy from the settings (hours to milliseconds; 0 keeps).
pub fn policy(settings: &RetentionSettings) -> RetentionPolicy {
    let age = |hours: u64| (hours > 0).then(|| hours as i64 * 3_600_000);
    let count = |n: u64| (n > 0).then_some(n);
    RetentionPolicy {
        finished_tasks_max_age_ms: age(settings.finished_tasks_max_age_hours),
        messages_max_age_ms: age(settings.messages_max_age_hours),
        messages_per_team: count(settings.messages_per_team),
        events_max_age_ms: age(settings.events_max_age_hours),
        events_per_team: count(settings.events_per_team),
        test_runs_max_age_ms: age(settings.test_runs_max_age_hours),
        batch: settings.batch.max(1),
    }
}

pub async fn sweep(store: Arc<dyn Store>, settings: RetentionSettings, stop: CancellationToken) {
    let policy = policy(&settings);
    if !policy.is_active() {
        return;
    }
    let mut tick = tokio::time::interval(Duration::from_millis(settings.every_ms.max(10)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.cancelled() => return,
        }
        loop {
            match store.prune(&policy).await {
                Ok(pruned) => {
                    if pruned.total() > 0 {
                        tracing::info!(
                            tasks = pruned.tasks,
                            messages = pruned.messages,
                            events = pruned.events,
                            test_runs = pruned.test_runs,
                            "retention deleted"
                        );
                    }
                    if !pruned.full(policy.batch) || stop.is_cancelled() {
                        break;
                    }
                    tokio::task::yield_now().await;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "retention failed; trying again next round");
                    break;
                }
            }
        }
    }
}
