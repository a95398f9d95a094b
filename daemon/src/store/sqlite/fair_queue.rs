//! The writer's queue: one queue per team, served in turn, so one team's pile of writes never
//! stands in front of another team's write.
//!
//! Jobs arrive numbered in the order they were sent. Within a team they run in that order. A
//! job of no team (a lease sweep, presence, team creation) runs only after every job sent
//! before it, whatever its team: the sweep's promise — a heartbeat sent before it is applied
//! before it judges the lease — depends on that.

use std::collections::{HashMap, VecDeque};

/// Whose write a job is: a team's, or the whole store's.
pub type QueueKey = Option<i64>;

pub struct FairQueue<J> {
    queues: HashMap<QueueKey, VecDeque<(u64, J)>>,
    /// Keys with jobs waiting, in the order they will be served.
    turns: VecDeque<QueueKey>,
    next_seq: u64,
    len: usize,
}

impl<J> Default for FairQueue<J> {
    fn default() -> Self {
        FairQueue {
            queues: HashMap::new(),
            turns: VecDeque::new(),
            next_seq: 0,
            len: 0,
        }
    }
}

impl<J> FairQueue<J> {
    /// Queues `job` after everything pushed before it.
    pub fn push(&mut self, key: QueueKey, job: J) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let queue = self.queues.entry(key).or_default();
        if queue.is_empty() {
            self.turns.push_back(key);
        }
        queue.push_back((seq, job));
        self.len += 1;
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The next job: the first of the next team in turn, except that a store-wide job waits
    /// for every job sent before it.
    pub fn pop(&mut self) -> Option<J> {
        for _ in 0..self.turns.len() {
            let key = self.turns.pop_front()?;
            if key.is_none() && self.earlier_team_job(key) {
                self.turns.push_back(key);
                continue;
            }
            let queue = self.queues.get_mut(&key)?;
            let (_, job) = queue.pop_front()?;
            if queue.is_empty() {
                self.queues.remove(&key);
            } else {
                self.turns.push_back(key);
            }
            self.len -= 1;
            return Some(job);
        }
        None
    }

    /// Whether some team has a job sent before the first job of `key`.
    fn earlier_team_job(&self, key: QueueKey) -> bool {
        let Some(first) = self
            .queues
            .get(&key)
            .and_then(|q| q.front())
            .map(|(s, _)| *s)
        else {
            return false;
        };
        self.queues
            .iter()
            .any(|(k, q)| k.is_some() && q.front().is_some_and(|(s, _)| *s < first))
    }
}

#[cfg(test)]
mod tests {
    use super::FairQueue;

    fn drain(q: &mut FairQueue<&'static str>) -> Vec<&'static str> {
        std::iter::from_fn(|| q.pop()).collect()
    }

    #[test]
    fn teams_take_turns_and_each_keeps_its_order() {
        let mut q = FairQueue::default();
        for job in ["a1", "a2", "a3", "a4"] {
            q.push(Some(1), job);
        }
        q.push(Some(2), "b1");
        q.push(Some(2), "b2");
        assert_eq!(drain(&mut q), ["a1", "b1", "a2", "b2", "a3", "a4"]);
        assert!(q.is_empty());
    }

    #[test]
    fn a_store_wide_job_runs_after_everything_sent_before_it() {
        let mut q = FairQueue::default();
        q.push(Some(1), "a1");
        q.push(Some(1), "a2");
        q.push(None, "sweep");
        q.push(Some(2), "b1");
        q.push(Some(1), "a3");
        // The sweep waits for a1 and a2 (sent before it), not for b1 or a3.
        let order = drain(&mut q);
        let at = |job| order.iter().position(|j| *j == job).unwrap();
        assert!(at("sweep") > at("a2"), "{order:?}");
        assert_eq!(order.len(), 5);
        assert!(at("a1") < at("a2") && at("a2") < at("a3"), "{order:?}");
    }
}
