//! The retention sweeper: every `[retention] every_ms`, deletes what the policy no longer
//! keeps in small writes (`Store::prune`, at most `batch` rows of a kind each), one after
//! another until nothing is left, yielding between them so other writes go first. Each round
//! reads the teams' own retention settings first, so an admin's change applies next round.

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
        finished_tasks_per_team: count(settings.finished_tasks_per_team),
        messages_max_age_ms: age(settings.messages_max_age_hours),
        messages_per_team: count(settings.messages_per_team),
        events_max_age_ms: age(settings.events_max_age_hours),
        events_per_team: count(settings.events_per_team),
        test_runs_max_age_ms: age(settings.test_runs_max_age_hours),
        test_runs_per_team: count(settings.test_runs_per_team),
        batch: settings.batch.max(1),
        per_team: Default::default(),
    }
}

pub async fn sweep(store: Arc<dyn Store>, settings: RetentionSettings, stop: CancellationToken) {
    let defaults = policy(&settings);
    let mut tick = tokio::time::interval(Duration::from_millis(settings.every_ms.max(10)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.cancelled() => return,
        }
        let mut policy = defaults.clone();
        match store.retention_overrides().await {
            Ok(per_team) => policy.per_team = per_team.into_iter().collect(),
            Err(e) => {
                tracing::warn!(error = %e, "team retention settings; trying again next round");
                continue;
            }
        }
        if !policy.is_active() {
            continue;
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
