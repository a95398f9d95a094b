//! The replicas serving one database, so the per-token and per-team limits hold for the
//! deployment rather than for each replica.
//!
//! Each replica marks itself alive in the store every `[limits] replica_heartbeat_ms` and
//! learns how many replicas were alive within `replica_expiry_ms` (by the database's clock);
//! a replica that stops is no longer counted once its mark is that old (one that shuts down
//! cleanly removes it at once). Each then enforces 1/N of every shared limit, N the live
//! replicas: a request costs N of its token's bucket ([`crate::http::limits::RequestRate`]),
//! and a stream cap of C allows C/N rounded up here ([`Replicas::share`]). So no request pays
//! a database round trip, and the totals stay within the bounds SECURITY.md states. SQLite
//! serves one daemon: N is always 1.

use crate::store::Store;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub struct Replicas {
    /// This replica's mark in the store: random per start.
    id: String,
    /// Live replicas at the last heartbeat, this one included (at least 1).
    live: AtomicUsize,
}

impl Default for Replicas {
    fn default() -> Self {
        Replicas {
            id: uuid::Uuid::new_v4().simple().to_string(),
            live: AtomicUsize::new(1),
        }
    }
}

impl Replicas {
    /// Live replicas, this one included.
    pub fn live(&self) -> usize {
        self.live.load(Ordering::Relaxed).max(1)
    }

    /// This replica's share of a deployment-wide cap: `cap / live`, rounded up (so each
    /// replica allows at least one, and the total is at most `cap + live - 1`).
    pub fn share(&self, cap: usize) -> usize {
        cap.div_ceil(self.live()).max(1)
    }

    fn set_live(&self, n: usize) {
        let before = self.live.swap(n.max(1), Ordering::Relaxed);
        if before != n.max(1) {
            tracing::info!(
                replicas = n.max(1),
                "live replicas changed: each enforces its share of the shared limits"
            );
        }
        crate::metrics::replicas_live(n.max(1));
    }
}

/// Marks this replica alive every `every` until shutdown, then removes its mark. While the
/// store cannot be reached the last count stays (requests are answered 503 meanwhile anyway).
pub async fn heartbeat(
    replicas: Arc<Replicas>,
    store: Arc<dyn Store>,
    every: Duration,
    expiry: Duration,
    shutdown: CancellationToken,
) {
    let mut tick = tokio::time::interval(every.max(Duration::from_millis(10)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut failing = false;
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = tick.tick() => {}
        }
        match store.replica_heartbeat(&replicas.id, expiry).await {
            Ok(n) => {
                failing = false;
                replicas.set_live(n);
            }
            Err(e) if !failing => {
                failing = true;
                tracing::warn!(error = %e, "the replica heartbeat failed; keeping the last count");
            }
            Err(_) => {}
        }
    }
    if let Err(e) = store.replica_left(&replicas.id).await {
        tracing::debug!(error = %e, "removing this replica's heartbeat failed; it ages out");
    }
}

#[cfg(test)]
mod tests {
    use super::Replicas;

    #[test]
    fn a_share_is_the_cap_divided_by_the_live_replicas_rounded_up_and_never_zero() {
        let r = Replicas::default();
        assert_eq!(r.share(32), 32);
        r.set_live(2);
        assert_eq!(r.share(32), 16);
        r.set_live(3);
        assert_eq!(r.share(32), 11);
        assert_eq!(r.share(2), 1);
        r.set_live(0);
        assert_eq!(r.live(), 1);
    }
}
