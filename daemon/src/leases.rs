//! The lease sweeper: a timer (not a poll for work) that returns expired claims to the queue in
//! one batched write per tick. Returned tasks wake long-polling claimers through the hub.

use crate::store::Store;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub async fn sweep(store: Arc<dyn Store>, every_ms: u64, shutdown: CancellationToken) {
    let mut tick = tokio::time::interval(Duration::from_millis(every_ms.max(10)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Log once per change of state, not once per tick, while the store cannot write.
    let mut failing = false;
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = shutdown.cancelled() => return,
        }
        match store.expire_leases().await {
            Ok(n) => {
                if failing {
                    tracing::info!("lease sweeps work again");
                    failing = false;
                }
                if n > 0 {
                    crate::metrics::leases_expired(n);
                    tracing::info!(expired = n, "returned expired leases");
                }
            }
            Err(e) if !failing => {
                tracing::warn!(error = %e, "lease sweep failed; will keep trying");
                failing = true;
            }
            Err(_) => {}
        }
    }
}
