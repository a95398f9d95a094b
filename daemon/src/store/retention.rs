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

/// One kind's limits as the backends' deletes take them: rows from at or before `before_ms`
/// (`i64::MIN`: none is old enough) or past the newest `keep` (`i64::MAX`: no cap).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgeOrCount {
    pub before_ms: i64,
    pub keep: i64,
}

/// A sequenced kind's limits (messages, events): created at or before `before_ms`, and at or
/// below the sequence `past_count` (the newest beyond the count kept); `None`: no such limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeqLimits {
    pub before_ms: Option<i64>,
    pub past_count: Option<i64>,
}

impl RetentionPolicy {
    /// Finished tasks' limits at `now`; `None` when every one is kept.
    pub fn finished_tasks_at(&self, now: i64) -> Option<AgeOrCount> {
        age_or_count(
            self.finished_tasks_max_age_ms,
            self.finished_tasks_per_team,
            now,
        )
    }

    /// Test runs' limits at `now`; `None` when every one is kept.
    pub fn test_runs_at(&self, now: i64) -> Option<AgeOrCount> {
        age_or_count(self.test_runs_max_age_ms, self.test_runs_per_team, now)
    }

    /// Messages' limits at `now` for a team whose last message is `msg_seq`.
    pub fn messages_at(&self, now: i64, msg_seq: i64) -> SeqLimits {
        seq_limits(
            self.messages_max_age_ms,
            self.messages_per_team,
            now,
            msg_seq,
        )
    }

    /// Events' limits at `now` for a team whose last event is `event_seq`.
    pub fn events_at(&self, now: i64, event_seq: i64) -> SeqLimits {
        seq_limits(self.events_max_age_ms, self.events_per_team, now, event_seq)
    }
}

fn age_or_count(max_age_ms: Option<i64>, keep: Option<u64>, now: i64) -> Option<AgeOrCount> {
    (max_age_ms.is_some() || keep.is_some()).then(|| AgeOrCount {
        before_ms: max_age_ms.map_or(i64::MIN, |a| now - a),
        keep: keep.map_or(i64::MAX, |k| k as i64),
    })
}

fn seq_limits(max_age_ms: Option<i64>, keep: Option<u64>, now: i64, last: i64) -> SeqLimits {
    SeqLimits {
        before_ms: max_age_ms.map(|a| now - a),
        past_count: keep.map(|k| last - k as i64),
    }
}

/// The team's newest `seq` of `table` created at or before `$2` (null: no age limit) and its
/// oldest `seq`, for [`cutoff`]; both backends run it (`$1` is the team).
pub fn bounds_sql(table: &str) -> String {
    format!(
        "select (select max(seq) from {table} where team_id = $1 and created_at <= $2),
                (select min(seq) from {table} where team_id = $1)"
    )
}

/// The last sequence to delete: everything up to `by_age` (the newest old enough, from
/// [`bounds_sql`]) and up to the count limit, at most `batch` rows from `oldest`.
pub fn cutoff(
    by_age: Option<i64>,
    oldest: Option<i64>,
    limits: SeqLimits,
    batch: i64,
) -> Option<i64> {
    let upto = by_age.into_iter().chain(limits.past_count).max()?;
    match oldest {
        Some(oldest) if oldest <= upto => Some(upto.min(oldest + batch - 1)),
        _ => None,
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
