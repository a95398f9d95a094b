//! Whether the daemon answers, logged once per change rather than once per failed call.

use crate::client::Error;
use std::sync::atomic::{AtomicBool, Ordering};

/// Shared by a worker's claim loop, heartbeats and completions.
#[derive(Debug, Default)]
pub(crate) struct Connectivity {
    down: AtomicBool,
}

impl Connectivity {
    /// A call succeeded: log the recovery if the daemon was unreachable.
    pub fn up(&self) {
        if self.down.swap(false, Ordering::SeqCst) {
            tracing::info!("daemon reachable again; resuming");
        }
    }

    /// A call failed for a reason worth retrying: log it if this is news.
    pub fn down(&self, error: &Error) {
        if !self.down.swap(true, Ordering::SeqCst) {
            tracing::warn!("daemon unreachable, backing off and retrying: {error}");
        }
    }
}
