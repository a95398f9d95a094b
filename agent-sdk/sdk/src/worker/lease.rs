//! Keeping a claim alive: heartbeats in the background at a third of the lease, and a signal
//! when the lease is lost.

use super::connectivity::Connectivity;
use super::handler::WorkspaceSlot;
use crate::client::{Backoff, Client};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// A running heartbeat loop for one task.
pub(crate) struct LeaseKeeper {
    stop: CancellationToken,
    lost: CancellationToken,
    task: JoinHandle<()>,
}

impl LeaseKeeper {
    /// Starts heartbeating `id` every `lease / 3`. When the daemon says the lease is gone (409,
    /// 404), or cannot be reached before the lease runs out, it cancels `handler` and fires
    /// [`LeaseKeeper::lost`].
    pub fn start(
        client: Client,
        id: String,
        lease: Duration,
        handler: CancellationToken,
        connectivity: Arc<Connectivity>,
        workspace: Arc<WorkspaceSlot>,
    ) -> LeaseKeeper {
        let stop = CancellationToken::new();
        let lost = CancellationToken::new();
        let signals = Signals {
            handler,
            stop: stop.clone(),
            lost: lost.clone(),
        };
        let task = tokio::spawn(heartbeat_loop(
            client,
            id,
            lease,
            connectivity,
            workspace,
            signals,
        ));
        LeaseKeeper { stop, lost, task }
    }

    /// Fires when the lease is lost.
    pub fn lost(&self) -> &CancellationToken {
        &self.lost
    }

    /// Stops heartbeating.
    pub async fn stop(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

/// The loop's cancellations: the handler's (cancelled with the lease), the loop's own stop,
/// and the lease lost.
struct Signals {
    handler: CancellationToken,
    stop: CancellationToken,
    lost: CancellationToken,
}

async fn heartbeat_loop(
    client: Client,
    id: String,
    lease: Duration,
    connectivity: Arc<Connectivity>,
    workspace: Arc<WorkspaceSlot>,
    signals: Signals,
) {
    let Signals {
        handler,
        stop,
        lost,
    } = signals;
    let every = (lease / 3).max(Duration::from_millis(10));
    // The daemon started the lease when it took the claim, a few milliseconds before its answer
    // reached us; two thirds of the lease are left between heartbeats to absorb such gaps.
    let mut valid_until = Instant::now() + lease;
    let mut pause = every;
    let mut backoff = Backoff::new(Duration::from_millis(50), every);
    let lose = |why: String| {
        tracing::warn!(task = %id, "lease lost: {why}");
        lost.cancel();
        handler.cancel();
    };
    loop {
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            // A new workspace goes out at once (the daemon shows it while the lease holds).
            _ = workspace.changed.notified() => {}
            _ = stop.cancelled() => return,
        }
        let note = workspace
            .note
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let sent_at = Instant::now();
        let answer = tokio::select! {
            r = client.heartbeat_with(&id, Some(lease), note) => Some(r),
            _ = tokio::time::sleep_until(valid_until) => None,
            _ = stop.cancelled() => return,
        };
        match answer {
            Some(Ok(_)) => {
                connectivity.up();
                valid_until = sent_at + lease;
                pause = every;
                backoff.reset();
            }
            Some(Err(e)) if e.is_transient() => {
                connectivity.down(&e);
                if Instant::now() >= valid_until {
                    return lose(format!(
                        "no heartbeat got through before the lease ran out ({e})"
                    ));
                }
                pause = backoff.next_delay().min(every);
            }
            Some(Err(e)) => return lose(e.to_string()),
            None => return lose("the daemon did not answer before the lease ran out".into()),
        }
    }
}
