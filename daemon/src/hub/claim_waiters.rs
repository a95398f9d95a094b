//! Claimers long-polling for work, woken one per task that becomes ready.
//!
//! Waking every waiting claimer of a team on every task change made one change cost one claim
//! attempt (a write) per waiter. A change that names the task it made ready wakes only the
//! longest-waiting claimer that could take it (its prefix, an owner that is empty, the
//! claimer or its role, and a project its filter admits). A claimer woken but gone before it looked again passes the wake on,
//! so a ready task is never left while someone who could take it sleeps. Changes that cannot
//! name their tasks (a PostgreSQL notice from another replica) still wake everyone.
//!
//! A store may go further than a wake: a waiting claimer leaves its claim with its place in the
//! queue ([`WaitTicket::park`]), and the write that makes a task ready takes it
//! ([`ClaimWaiters::take_parcel`]) and claims for that claimer in the same transaction — one
//! commit per task handed out instead of two. The parcel is opaque here; only the store that
//! parked it reads it.

use std::any::Any;
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
    /// The claim it left for the store to serve; changed only under the waiters' lock.
    parked: Mutex<Parked>,
}

/// What a store left with a waiting claimer so it can claim for it inside the write that makes
/// a task ready; opaque to the hub.
pub type Parcel = Box<dyn Any + Send>;

enum Parked {
    Nothing,
    Left(Parcel),
    /// Taken by the store: its answer comes over the store's own channel. `withdrawn`: the
    /// claimer stopped waiting meanwhile, so a parcel the store hands back is dropped (which
    /// answers it) rather than parked again where nobody would take it.
    Serving {
        withdrawn: bool,
    },
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

    fn serving(&self) -> bool {
        matches!(*lock(&self.parked), Parked::Serving { .. })
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
            parked: Mutex::new(Parked::Nothing),
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

    /// Wakes the longest-waiting claimer that could take `task`; false if none could. A
    /// claimer the store is serving is passed over: its claim is under way.
    pub fn wake_one(&self, task: &ReadyTask) -> bool {
        let mut waiting = lock(&self.waiting);
        let Some(ticket) = waiting
            .by_ticket
            .iter()
            .find(|(_, slot)| slot.could_take(task) && !slot.serving())
            .map(|(ticket, _)| *ticket)
        else {
            return false;
        };
        let slot = waiting.by_ticket.remove(&ticket).expect("found above");
        slot.wake(Wake::Ready(task.clone()));
        true
    }

    /// The parcel of the claimer `task` would wake, when it left one: the store claims for it
    /// now and answers it itself, and must then call [`ClaimWaiters::served`] with the ticket.
    /// `None` when that claimer left none: it is woken after the commit, as ever.
    pub fn take_parcel(&self, task: &ReadyTask) -> Option<(u64, Parcel)> {
        let waiting = lock(&self.waiting);
        let (ticket, slot) = waiting
            .by_ticket
            .iter()
            .find(|(_, slot)| slot.could_take(task) && !slot.serving())?;
        let mut parked = lock(&slot.parked);
        match std::mem::replace(&mut *parked, Parked::Serving { withdrawn: false }) {
            Parked::Left(parcel) => Some((*ticket, parcel)),
            other => {
                *parked = other;
                None
            }
        }
    }

    /// The store is done with the parcel of `ticket`. `back`: it claimed nothing, and the
    /// claimer keeps waiting where it was, parcel and all, if it is still queued and still
    /// waiting; otherwise the parcel is dropped here, which answers its claimer with nothing.
    /// `None`: the claimer is answered and leaves the queue.
    pub fn served(&self, ticket: u64, back: Option<Parcel>) {
        let mut waiting = lock(&self.waiting);
        let Some(parcel) = back else {
            waiting.by_ticket.remove(&ticket);
            return;
        };
        if let Some(slot) = waiting.by_ticket.get(&ticket) {
            let mut parked = lock(&slot.parked);
            let withdrawn = matches!(*parked, Parked::Serving { withdrawn: true });
            *parked = if withdrawn {
                Parked::Nothing
            } else {
                Parked::Left(parcel)
            };
        }
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

    /// Leaves a claim for the store to serve in the write that makes a task ready.
    pub fn park(&self, parcel: Parcel) {
        let _waiting = lock(&self.waiters.waiting);
        *lock(&self.slot.parked) = Parked::Left(parcel);
    }

    /// Takes the parcel back. False when the store took it first: a claim made with it is
    /// under way or done, and its answer comes over the store's channel.
    pub fn withdraw(&self) -> bool {
        self.withdrawer().withdraw()
    }

    /// What takes the parcel back, for a caller that may outlive its hold on the ticket.
    pub fn withdrawer(&self) -> Withdrawer {
        Withdrawer {
            waiters: self.waiters.clone(),
            slot: self.slot.clone(),
        }
    }
}

/// Takes a claimer's parcel back ([`WaitTicket::withdraw`]).
pub struct Withdrawer {
    waiters: Arc<ClaimWaiters>,
    slot: Arc<Slot>,
}

impl Withdrawer {
    /// True when nothing is in flight; false when the store took the parcel (its answer comes
    /// over the store's channel, and a parcel it hands back is dropped).
    pub fn withdraw(&self) -> bool {
        let _waiting = lock(&self.waiters.waiting);
        let mut parked = lock(&self.slot.parked);
        if let Parked::Serving { withdrawn } = &mut *parked {
            *withdrawn = true;
            return false;
        }
        *parked = Parked::Nothing;
        true
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
#[path = "claim_waiters_tests.rs"]
mod tests;
