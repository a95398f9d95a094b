//! What retention deletes (`[retention]`, applied by `crate::retention` in the background):
//! finished tasks, messages (with their idempotency keys), events and test-history runs older
//! than an age, and messages and events past a count per team. Each call of `Store::prune`
//! deletes at most `batch` rows of each kind, so one call is a small write.

/// Ages in milliseconds (`None`: kept whatever their age), counts per team (`None`: no cap).
/// Backends judge ages by their own clock (the database's on PostgreSQL).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetentionPolicy {
    /// Completed, failed and cancelled tasks, by their last update; a finished task that an
    /// unfinished task still names as a blocker is kept.
    pub finished_tasks_max_age_ms: Option<i64>,
    pub messages_max_age_ms: Option<i64>,
    /// The newest messages kept per team.
    pub messages_per_team: Option<u64>,
    pub events_max_age_ms: Option<i64>,
    /// The newest events kept per team.
    pub events_per_team: Option<u64>,
    /// Test-history runs, by when they were posted (`[history] runs_per_project` caps them too).
    pub test_runs_max_age_ms: Option<i64>,
    /// The most rows of one kind one call deletes.
    pub batch: usize,
}

impl RetentionPolicy {
    /// Whether anything is ever deleted.
    pub fn is_active(&self) -> bool {
        self.finished_tasks_max_age_ms.is_some()
            || self.messages_max_age_ms.is_some()
            || self.messages_per_team.is_some()
            || self.events_max_age_ms.is_some()
            || self.events_per_team.is_some()
            || self.test_runs_max_age_ms.is_some()
    }
}

/// What one call deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    pub tasks: u64,
    pub messages: u64,
    pub events: u64,
    pub test_runs: u64,
}

impl Pruned {
    /// Whether some kind filled its batch (there may be more to delete now).
    pub fn full(&self, batch: usize) -> bool {
        let b = batch as u64;
        self.tasks >= b || self.messages >= b || self.events >= b || self.test_runs >= b
    }

    pub fn total(&self) -> u64 {
        self.tasks + self.messages + self.events + self.test_runs
    }
}
