//! The writer's queue: one queue per team, served in turn, so one team's pile of writes never
//! stands in front of another team's write.
//!
//! Jobs arrive numbered in the order they were sent. Within a team they run in that order. A
//! job of no team (a lease sweep, presence, team creation) runs only after every job sent
//! before it, whatever its team: the sweep's promise — a heartbeat sent before it is applied
//! before it judges the lease — depends on that.
//!
//! The queue also remembers how long each team's jobs have been taking. A team whose jobs are
//! heavy (`HEAVY` or more, on a running average) gets a batch of its own, one job, so a light
//! write of another team never waits for a heavy job and its commit within its own batch; the
//! writer alternates (a heavy job's batch after each batch of light ones), so heavy teams are
//! served too.

use super::super::error::{StoreError, StoreResult};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A team whose jobs take this long on average runs them one per batch.
pub const HEAVY: Duration = Duration::from_millis(2);

/// Whose write a job is: a team's, or the whole store's.
pub type QueueKey = Option<i64>;

pub struct FairQueue<J> {
    queues: HashMap<QueueKey, VecDeque<(u64, J)>>,
    /// Each team's running average job time (teams with jobs waiting, or seen lately).
    cost: HashMap<QueueKey, Duration>,
    /// Keys with jobs waiting, in the order they will be served.
    turns: VecDeque<QueueKey>,
    /// Whether a heavy team's job goes first in the next batch (after a batch of light ones).
    heavy_turn: bool,
    next_seq: u64,
    len: usize,
}

impl<J> Default for FairQueue<J> {
    fn default() -> Self {
        FairQueue {
            queues: HashMap::new(),
            cost: HashMap::new(),
            turns: VecDeque::new(),
            heavy_turn: false,
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
        self.pop_where(|_| true).map(|(_, job)| job)
    }

    /// The next job for a batch holding `taken` jobs so far, and whether it must be the batch's
    /// only one: light teams' jobs share a batch; a heavy team's job runs alone, first after a
    /// batch of light ones, or when nothing light is waiting.
    pub fn next_for_batch(&mut self, taken: usize) -> Option<(QueueKey, J, bool)> {
        if taken == 0 && self.heavy_turn {
            if let Some((key, job)) = self.pop_heavy() {
                return Some((key, job, true));
            }
        }
        if let Some((key, job)) = self.pop_light() {
            return Some((key, job, false));
        }
        if taken == 0 {
            return self.pop_any();
        }
        None
    }

    /// Ends a batch: after one of light jobs, a heavy job waiting goes first.
    pub fn batch_done(&mut self, alone: bool) {
        self.heavy_turn = !alone;
    }

    /// The next job of a team whose jobs are light, if any.
    fn pop_light(&mut self) -> Option<(QueueKey, J)> {
        let cost = std::mem::take(&mut self.cost);
        let popped = self.pop_where(|key| !is_heavy(&cost, key));
        self.cost = cost;
        popped
    }

    /// The next job of a team whose jobs are heavy, if any.
    fn pop_heavy(&mut self) -> Option<(QueueKey, J)> {
        let cost = std::mem::take(&mut self.cost);
        let popped = self.pop_where(|key| is_heavy(&cost, key));
        self.cost = cost;
        popped
    }

    /// The next job, light or heavy, and whether its team's jobs are heavy.
    fn pop_any(&mut self) -> Option<(QueueKey, J, bool)> {
        let (key, job) = self.pop_where(|_| true)?;
        Some((key, job, is_heavy(&self.cost, key)))
    }

    /// Books how long a job of `key` took.
    pub fn record(&mut self, key: QueueKey, took: Duration) {
        if key.is_none() {
            return;
        }
        let average = self.cost.entry(key).or_insert(took);
        *average = (*average * 3 + took) / 4;
        if self.cost.len() > 10_000 {
            // Forget idle teams; a team with jobs waiting is measured again soon.
            let queues = &self.queues;
            self.cost.retain(|k, _| queues.contains_key(k));
        }
    }

    fn pop_where(&mut self, eligible: impl Fn(QueueKey) -> bool) -> Option<(QueueKey, J)> {
        for _ in 0..self.turns.len() {
            let key = self.turns.pop_front()?;
            if !eligible(key) || (key.is_none() && self.earlier_team_job(key)) {
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
            return Some((key, job));
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

/// How many jobs each team (and the store as a whole) may have waiting: a sender past it waits
/// for one of its own team's jobs to run.
pub struct Admission {
    per_queue: usize,
    queues: Mutex<HashMap<QueueKey, Arc<Semaphore>>>,
}

impl Admission {
    pub fn new(per_queue: usize) -> Self {
        Admission {
            per_queue,
            queues: Mutex::default(),
        }
    }

    /// Drops a queue's slots (jobs holding one keep it until they run).
    pub fn forget(&self, key: QueueKey) {
        self.queues
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&key);
    }

    pub async fn enter(&self, key: QueueKey) -> StoreResult<OwnedSemaphorePermit> {
        let slots = self
            .queues
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(key)
            .or_insert_with(|| Arc::new(Semaphore::new(self.per_queue)))
            .clone();
        slots
            .acquire_owned()
            .await
            .map_err(|_| StoreError::Unavailable("the store is closed".into()))
    }
}

/// How long a batch keeps taking jobs. One team alone fills it up to `alone` (group commit: one
/// fsync for as much as it sends); once it holds jobs of two teams, up to `shared`, so a team
/// whose write joined a batch another team was filling waits for a few milliseconds of that
/// team's jobs and the commit, not for the whole batch. Store-wide jobs (sweeps, presence)
/// share any batch without shortening it.
pub struct BatchFill {
    alone: Duration,
    shared: Duration,
    first_team: QueueKey,
    teams_shared: bool,
}

impl BatchFill {
    pub fn new(alone: Duration, shared: Duration) -> Self {
        BatchFill {
            alone,
            shared,
            first_team: None,
            teams_shared: false,
        }
    }

    /// Books a job of `key` taken into the batch.
    pub fn took(&mut self, key: QueueKey) {
        match (key, self.first_team) {
            (None, _) => {}
            (Some(_), None) => self.first_team = key,
            (Some(_), Some(_)) => self.teams_shared |= key != self.first_team,
        }
    }

    /// Whether a batch that has run `elapsed` may take another job.
    pub fn has_room(&self, elapsed: Duration) -> bool {
        elapsed
            < if self.teams_shared {
                self.shared
            } else {
                self.alone
            }
    }
}

/// Store-wide jobs count as light: they are the sweeps and presence writes.
fn is_heavy(cost: &HashMap<QueueKey, Duration>, key: QueueKey) -> bool {
    key.is_some() && cost.get(&key).is_some_and(|c| *c >= HEAVY)
}

#[cfg(test)]
mod tests {
    use super::{BatchFill, FairQueue, HEAVY};
    use std::time::Duration;

    #[test]
    fn a_batch_two_teams_share_closes_sooner_than_one_teams() {
        let ms = Duration::from_millis;
        let mut fill = BatchFill::new(ms(25), ms(4));
        fill.took(Some(1));
        fill.took(None);
        fill.took(Some(1));
        assert!(
            fill.has_room(ms(10)),
            "one team (and the store) fills it up to 25 ms"
        );
        assert!(!fill.has_room(ms(25)));
        fill.took(Some(2));
        assert!(fill.has_room(ms(3)));
        assert!(
            !fill.has_room(ms(4)),
            "another team's write is in: it waits for no more than 4 ms of jobs"
        );
    }

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

    #[test]
    fn a_heavy_teams_job_runs_alone_alternating_with_batches_of_light_jobs() {
        let mut q = FairQueue::default();
        q.record(Some(1), HEAVY * 5);
        q.record(Some(2), Duration::from_micros(50));
        q.push(Some(1), "heavy");
        q.push(Some(2), "light");
        q.push(Some(2), "light 2");
        let job = |next: Option<(Option<i64>, &'static str, bool)>| next.map(|(_, j, a)| (j, a));
        // A batch of the light jobs; the heavy one does not join it.
        assert_eq!(job(q.next_for_batch(0)), Some(("light", false)));
        assert_eq!(job(q.next_for_batch(1)), Some(("light 2", false)));
        assert_eq!(job(q.next_for_batch(2)), None, "only a heavy job is left");
        q.batch_done(false);
        // Then the heavy job, alone, although a light one is waiting.
        q.push(Some(2), "light 3");
        assert_eq!(job(q.next_for_batch(0)), Some(("heavy", true)));
        q.batch_done(true);
        assert_eq!(job(q.next_for_batch(0)), Some(("light 3", false)));
        // A heavy team that turns light again is served with the others.
        for _ in 0..20 {
            q.record(Some(1), Duration::from_micros(50));
        }
        q.push(Some(1), "now light");
        assert_eq!(job(q.next_for_batch(1)), Some(("now light", false)));
    }
}
