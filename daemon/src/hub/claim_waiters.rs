//! Claimers long-polling for work, woken one per task that becomes ready.
//!
//! Waking every waiting claimer of a team on every task change made one change cost one claim
//! attempt (a write) per waiter. A change that names the task it made ready wakes only the
//! longest-waiting claimer that could take it (its prefix, an owner that is empty, the
//! claimer or its role, and a project its filter admits). A claimer woken but gone before it looked again passes the wake on,
//! so a ready task is never left while someone who could take it sleeps. Changes that cannot
//! name their tasks (a PostgreSQL notice from another replica) still wake everyone.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::Notify;

/// A task that has just become claimable: what a claimer must match to take it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadyTask {
    pub prefix: String,
    pub owner: Option<String>,
    /// Its metadata `project`, when a string.
    pub project: Option<String>,
}

/// A claim's project filter: it takes tasks of `name` and tasks that name no project; with
/// `strict`, only tasks of `name`. (The rules that check one are in `store::rules::project`.)
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProjectFilter {
    pub name: String,
    pub strict: bool,
}

impl ProjectFilter {
    /// Whether a task of `project` (its metadata `project`, when a string) may be taken.
    pub fn admits(&self, project: Option<&str>) -> bool {
        match project {
            Some(p) => p == self.name,
            None => !self.strict,
        }
    }
}

/// The waiting claimers of one team, oldest first. Holds one entry per waiting request, so
/// it is bounded by the connections the server accepts; an entry leaves with its request.
#[derive(Default)]
pub struct ClaimWaiters {
    waiting: Mutex<Waiting>,
}

#[derive(Default)]
struct Waiting {
    next_ticket: u64,
    by_ticket: BTreeMap<u64, Arc<Slot>>,
}

struct Slot {
    agent: String,
    role: String,
    prefixes: Vec<String>,
    project: Option<ProjectFilter>,
    notify: Notify,
    /// Why the claimer was woken; set under the waiters' lock when it leaves the queue.
    woken_by: Mutex<Option<Wake>>,
}

#[derive(Debug, Clone)]
enum Wake {
    Ready(ReadyTask),
    All,
}

impl Slot {
    fn could_take(&self, task: &ReadyTask) -> bool {
        self.prefixes.contains(&task.prefix)
            && task
                .owner
                .as_deref()
                .is_none_or(|o| o == self.agent || o == self.role)
            && self
                .project
                .as_ref()
                .is_none_or(|f| f.admits(task.project.as_deref()))
    }

    fn wake(&self, why: Wake) {
        *lock(&self.woken_by) = Some(why);
        self.notify.notify_one(); // stored as a permit if the claimer is not waiting yet
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl ClaimWaiters {
    /// Joins the queue. Register before looking for work, so a task made ready between the
    /// look and the wait still wakes this claimer.
    pub fn register(
        self: &Arc<Self>,
        agent: &str,
        role: &str,
        prefixes: &[String],
        project: Option<&ProjectFilter>,
    ) -> WaitTicket {
        let slot = Arc::new(Slot {
            agent: agent.to_string(),
            role: role.to_string(),
            prefixes: prefixes.to_vec(),
            project: project.cloned(),
            notify: Notify::new(),
            woken_by: Mutex::new(None),
        });
        let mut waiting = lock(&self.waiting);
        let ticket = waiting.next_ticket;
        waiting.next_ticket += 1;
        waiting.by_ticket.insert(ticket, slot.clone());
        WaitTicket {
            waiters: self.clone(),
            ticket,
            slot,
        }
    }

    /// Wakes the longest-waiting claimer that could take `task`; false if none could.
    pub fn wake_one(&self, task: &ReadyTask) -> bool {
        let mut waiting = lock(&self.waiting);
        let Some(ticket) = waiting
            .by_ticket
            .iter()
            .find(|(_, slot)| slot.could_take(task))
            .map(|(ticket, _)| *ticket)
        else {
            return false;
        };
        let slot = waiting.by_ticket.remove(&ticket).expect("found above");
        slot.wake(Wake::Ready(task.clone()));
        true
    }

    /// Wakes every waiting claimer.
    pub fn wake_all(&self) {
        let mut waiting = lock(&self.waiting);
        for slot in std::mem::take(&mut waiting.by_ticket).into_values() {
            slot.wake(Wake::All);
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        lock(&self.waiting).by_ticket.len()
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A claimer's place in the queue. Dropping it leaves the queue; if the claimer had been woken
/// and had not looked for work since ([`WaitTicket::take_wake`]), the wake goes to the next
/// claimer that could use it.
pub struct WaitTicket {
    waiters: Arc<ClaimWaiters>,
    ticket: u64,
    slot: Arc<Slot>,
}

impl WaitTicket {
    /// Resolves once this claimer is woken (at once if it already was).
    pub async fn woken(&self) {
        self.slot.notify.notified().await
    }

    /// Marks the wake as used: the caller is about to look for work again, after it.
    pub fn take_wake(self) {
        lock(&self.slot.woken_by).take();
    }
}

impl Drop for WaitTicket {
    fn drop(&mut self) {
        let mut waiting = lock(&self.waiters.waiting);
        if waiting.by_ticket.remove(&self.ticket).is_some() {
            return; // never woken
        }
        let unused = lock(&self.slot.woken_by).take();
        drop(waiting);
        if let Some(Wake::Ready(task)) = unused {
            self.waiters.wake_one(&task);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ready(prefix: &str, owner: Option<&str>) -> ReadyTask {
        ReadyTask {
            prefix: prefix.into(),
            owner: owner.map(Into::into),
            project: None,
        }
    }

    fn ready_in(project: Option<&str>) -> ReadyTask {
        ReadyTask {
            project: project.map(Into::into),
            ..ready("TEST", None)
        }
    }

    fn filter(name: &str, strict: bool) -> ProjectFilter {
        ProjectFilter {
            name: name.into(),
            strict,
        }
    }

    fn prefixes(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| s.to_string()).collect()
    }

    async fn is_woken(t: &WaitTicket) -> bool {
        tokio::time::timeout(Duration::from_millis(0), t.woken())
            .await
            .is_ok()
    }

    #[tokio::test]
    async fn a_ready_task_wakes_only_the_oldest_claimer_that_could_take_it() {
        let q = Arc::new(ClaimWaiters::default());
        let qarun = q.register("e1", "executor", &prefixes(&["QARUN"]), None);
        let first = q.register("t1", "tester", &prefixes(&["TEST"]), None);
        let second = q.register("t2", "tester", &prefixes(&["TEST"]), None);
        assert!(q.wake_one(&ready("TEST", None)));
        assert!(is_woken(&first).await);
        assert!(!is_woken(&second).await);
        assert!(!is_woken(&qarun).await);
        assert_eq!(q.len(), 2);
    }

    #[tokio::test]
    async fn an_owned_task_wakes_its_owner_or_a_claimer_of_its_role() {
        let q = Arc::new(ClaimWaiters::default());
        let other = q.register("t1", "tester", &prefixes(&["TEST"]), None);
        let owner = q.register("t2", "tester", &prefixes(&["TEST"]), None);
        assert!(q.wake_one(&ready("TEST", Some("t2"))));
        assert!(is_woken(&owner).await);
        assert!(!is_woken(&other).await);
        assert!(q.wake_one(&ready("TEST", Some("tester"))));
        assert!(is_woken(&other).await);
        assert!(!q.wake_one(&ready("TEST", Some("nobody"))));
    }

    #[tokio::test]
    async fn a_project_task_wakes_only_a_claimer_whose_filter_admits_it() {
        let q = Arc::new(ClaimWaiters::default());
        let shop = filter("shop", false);
        let calc_only = filter("calc", true);
        let other = q.register("t1", "tester", &prefixes(&["TEST"]), Some(&shop));
        let strict = q.register("t2", "tester", &prefixes(&["TEST"]), Some(&calc_only));
        assert!(q.wake_one(&ready_in(Some("calc"))));
        assert!(is_woken(&strict).await);
        assert!(!is_woken(&other).await);
        assert!(!q.wake_one(&ready_in(Some("calc"))));
        strict.take_wake();
        // A task naming no project: any claimer but a strict one.
        let strict = q.register("t2", "tester", &prefixes(&["TEST"]), Some(&calc_only));
        assert!(q.wake_one(&ready_in(None)));
        assert!(is_woken(&other).await);
        assert!(!is_woken(&strict).await);
    }

    #[tokio::test]
    async fn a_woken_claimer_that_leaves_without_looking_passes_the_wake_on() {
        let q = Arc::new(ClaimWaiters::default());
        let gone = q.register("t1", "tester", &prefixes(&["TEST"]), None);
        let next = q.register("t2", "tester", &prefixes(&["TEST"]), None);
        q.wake_one(&ready("TEST", None));
        drop(gone);
        assert!(is_woken(&next).await);
        assert!(q.is_empty());
    }

    #[tokio::test]
    async fn a_claimer_that_used_its_wake_passes_nothing_on() {
        let q = Arc::new(ClaimWaiters::default());
        let used = q.register("t1", "tester", &prefixes(&["TEST"]), None);
        let next = q.register("t2", "tester", &prefixes(&["TEST"]), None);
        q.wake_one(&ready("TEST", None));
        used.woken().await;
        used.take_wake();
        assert!(!is_woken(&next).await);
        assert_eq!(q.len(), 1);
    }

    #[tokio::test]
    async fn wake_all_wakes_everyone_and_empties_the_queue() {
        let q = Arc::new(ClaimWaiters::default());
        let a = q.register("t1", "tester", &prefixes(&["TEST"]), None);
        let b = q.register("e1", "executor", &prefixes(&["QARUN"]), None);
        q.wake_all();
        assert!(is_woken(&a).await && is_woken(&b).await);
        assert!(q.is_empty());
        drop(a); // nothing to pass on
        assert!(q.is_empty());
    }
}
