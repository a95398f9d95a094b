//! What a write's saved tasks changed in their team's usage counters: moves between statuses
//! and bytes stored. Both backends count a transaction's task updates this way and write the
//! sum once when it commits, rather than by a trigger per updated row or statement (SQLite
//! migration 0014, PostgreSQL migration 0018); inserts and deletes are still counted by the
//! database's triggers.

use super::TaskState;
use huddle_wire::TaskStatus;

/// Tasks moved between statuses and bytes stored, for one team.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskUsageDelta {
    /// Pending, in progress, completed, failed, cancelled (`TaskStatus::ALL`'s order).
    pub statuses: [i64; 5],
    pub bytes: i64,
}

impl TaskUsageDelta {
    /// `by` tasks more (or fewer) with `status`.
    pub fn status(&mut self, status: TaskStatus, by: i64) {
        let at = TaskStatus::ALL
            .iter()
            .position(|s| *s == status)
            .expect("every status is in ALL");
        self.statuses[at] += by;
    }

    /// `n` tasks moved from `from` to `to`, their text unchanged (a claim).
    pub fn moved(&mut self, from: TaskStatus, to: TaskStatus, n: i64) {
        self.status(from, -n);
        self.status(to, n);
    }

    /// A saved task's move from the status and size it was loaded with.
    pub fn saved(&mut self, state: &TaskState) {
        if state.status != state.loaded_status {
            self.moved(state.loaded_status, state.status, 1);
        }
        self.bytes += state.stored_bytes() - state.loaded_bytes;
    }

    /// Whether nothing changed.
    pub fn is_zero(&self) -> bool {
        *self == TaskUsageDelta::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_cancel_out_and_the_counts_follow_the_statuses_order() {
        let mut d = TaskUsageDelta::default();
        d.moved(TaskStatus::Pending, TaskStatus::InProgress, 3);
        d.moved(TaskStatus::InProgress, TaskStatus::Completed, 2);
        assert_eq!(d.statuses, [-3, 1, 2, 0, 0]);
        d.moved(TaskStatus::InProgress, TaskStatus::Pending, 1);
        d.moved(TaskStatus::Completed, TaskStatus::InProgress, 2);
        d.moved(TaskStatus::InProgress, TaskStatus::Pending, 2);
        assert!(d.is_zero(), "{d:?}");
    }
}
