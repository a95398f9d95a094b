//! What retention deletes (`[retention]`, applied by `crate::retention` in the background):
//! finished tasks, messages (with their idempotency keys), events and test-history runs older
//! than an age or past a count per team, each team under its own overrides (the admin's
//! `PUT /v1/teams/{team}/settings`). Each call of `Store::prune` deletes at most `batch` rows
//! of each kind, so one call is a small write. Messages and events a registered webhook of the
//! team has not handled yet (past its cursors) are never deleted.

use huddle_wire::TeamRetention;
use std::collections::BTreeMap;

/// Ages in milliseconds (`None`: kept whatever their age), counts per team (`None`: no cap).
/// Backends judge ages by their own clock (the database's on PostgreSQL).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetentionPolicy {
    /// Completed, failed and cancelled tasks, by their last update; a finished task that an
    /// unfinished task still names as a blocker is kept.
    pub finished_tasks_max_age_ms: Option<i64>,
    /// The most recently updated finished tasks kept per team (the same exception).
    pub finished_tasks_per_team: Option<u64>,
    pub messages_max_age_ms: Option<i64>,
    /// The newest messages kept per team.
    pub messages_per_team: Option<u64>,
    pub events_max_age_ms: Option<i64>,
    /// The newest events kept per team.
    pub events_per_team: Option<u64>,
    /// Test-history runs, by when they were posted (`[history] runs_per_project` caps them too).
    pub test_runs_max_age_ms: Option<i64>,
    /// The newest test-history runs kept per team (all projects together).
    pub test_runs_per_team: Option<u64>,
    /// The most rows of one kind one call deletes.
    pub batch: usize,
    /// Teams whose admin set their own retention, by team id: each set field replaces the
    /// default above for that team (`0`: keep everything of that kind).
    pub per_team: BTreeMap<i64, TeamRetention>,
}

impl RetentionPolicy {
    /// Whether anything is ever deleted.
    pub fn is_active(&self) -> bool {
        self.deletes_anything()
            || self
                .per_team
                .keys()
                .any(|t| self.for_team(*t).deletes_anything())
    }

    /// Whether this policy (one team's, from [`Self::for_team`]) deletes anything.
    pub fn deletes_anything(&self) -> bool {
        self.finished_tasks_max_age_ms.is_some()
            || self.finished_tasks_per_team.is_some()
            || self.messages_max_age_ms.is_some()
            || self.messages_per_team.is_some()
            || self.events_max_age_ms.is_some()
            || self.events_per_team.is_some()
            || self.test_runs_max_age_ms.is_some()
            || self.test_runs_per_team.is_some()
    }

    /// The policy one team is under: the defaults with its overrides applied.
    pub fn for_team(&self, team_id: i64) -> RetentionPolicy {
        let mut p = self.clone_defaults();
        let Some(o) = self.per_team.get(&team_id) else {
            return p;
        };
        let age = |v: Option<u64>, slot: &mut Option<i64>| {
            if let Some(hours) = v {
                *slot = (hours > 0).then(|| hours.min(1 << 40) as i64 * 3_600_000);
            }
        };
        let count = |v: Option<u64>, slot: &mut Option<u64>| {
            if let Some(n) = v {
                *slot = (n > 0).then_some(n);
            }
        };
        age(
            o.finished_tasks_max_age_hours,
            &mut p.finished_tasks_max_age_ms,
        );
        count(o.finished_tasks_kept, &mut p.finished_tasks_per_team);
        age(o.messages_max_age_hours, &mut p.messages_max_age_ms);
        count(o.messages_kept, &mut p.messages_per_team);
        age(o.events_max_age_hours, &mut p.events_max_age_ms);
        count(o.events_kept, &mut p.events_per_team);
        age(o.test_runs_max_age_hours, &mut p.test_runs_max_age_ms);
        count(o.test_runs_kept, &mut p.test_runs_per_team);
        p
    }

    fn clone_defaults(&self) -> RetentionPolicy {
        RetentionPolicy {
            finished_tasks_max_age_ms: self.finished_tasks_max_age_ms,
            finished_tasks_per_team: self.finished_tasks_per_team,
            messages_max_age_ms: self.messages_max_age_ms,
            messages_per_team: self.messages_per_team,
            events_max_age_ms: self.events_max_age_ms,
            events_per_team: self.events_per_team,
            test_runs_max_age_ms: self.test_runs_max_age_ms,
            test_runs_per_team: self.test_runs_per_team,
            batch: self.batch,
            per_team: BTreeMap::new(),
        }
    }
}

/// The highest sequence retention may delete given the team's webhooks' cursors (what each
/// has handled; `None`: no webhook): `upto` capped so a lagging webhook loses nothing.
pub fn cap_for_webhooks(upto: Option<i64>, slowest_cursor: Option<i64>) -> Option<i64> {
    match (upto, slowest_cursor) {
        (Some(upto), Some(cursor)) => Some(upto.min(cursor)),
        (upto, _) => upto,
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
