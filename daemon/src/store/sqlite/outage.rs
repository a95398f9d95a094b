//! Leases through a time the writer could not commit (another process held the write lock past
//! the busy timeout, the disk was full, the file read-only): their holders' heartbeats were
//! answered 503, so the first batch that commits again first renews the leases that were live
//! at the last commit before it, as PostgreSQL's recovery from an outage does
//! (`postgres/health.rs`).

/// What the writer remembers of its last commit, and whether leases await renewal.
pub struct Outage {
    grace_ms: i64,
    /// When the last batch committed.
    live_at_ms: i64,
    /// Set by a failed batch: the leases live at this time are to be renewed.
    renew_from_ms: Option<i64>,
}

impl Outage {
    pub fn new(grace_ms: i64) -> Self {
        Outage {
            grace_ms,
            live_at_ms: chrono::Utc::now().timestamp_millis(),
            renew_from_ms: None,
        }
    }

    /// What the next batch renews first: (leases live at, for at least this long from now).
    pub fn renewal(&self) -> Option<(i64, i64)> {
        self.renew_from_ms.map(|from| (from, self.grace_ms))
    }

    pub fn batch_ended(&mut self, committed: bool) {
        if committed {
            self.live_at_ms = chrono::Utc::now().timestamp_millis();
            self.renew_from_ms = None;
        } else if self.renew_from_ms.is_none() {
            self.renew_from_ms = Some(self.live_at_ms);
        }
    }
}
