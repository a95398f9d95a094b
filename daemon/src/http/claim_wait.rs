//! The claim long poll (HTTP and MCP): look, wait for a wake, look again — and never leave a task
//! claimed for a client that is no longer there to receive it.
//!
//! A client leaves in two ways: over HTTP its connection closes and the handler's future is
//! dropped; over MCP its request is cancelled (`notifications/cancelled`) or its connection
//! closes, which fires the `departed` token. Either can happen while the store is committing a
//! claim. So the store call runs in a task of its own that hands the tasks over a channel: if
//! nobody is left to take them, it releases them at once (no attempt used, no lease to wait out).

use super::error::{ApiError, ApiResult};
use super::{AppState, AuthEpoch, Revocation};
use crate::hub::{ProjectFilter, WaitTicket, Withdrawer};
use crate::store::{Caller, ClaimToPark, HandedOver, StoreError, StoreResult, Undelivered};
use futures::FutureExt;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// One claim request, checked.
pub struct ClaimPlan {
    pub prefixes: Vec<String>,
    pub project: Option<ProjectFilter>,
    pub lease_ms: u64,
    pub max: usize,
    pub wait_ms: u64,
}

/// Claims up to `plan.max` ready tasks, waiting up to `plan.wait_ms` for one; empty when nothing
/// became ready in time or the client left (`departed`).
pub async fn claim_waiting(
    state: &AppState,
    caller: &Caller,
    epoch: AuthEpoch,
    plan: ClaimPlan,
    departed: &CancellationToken,
) -> ApiResult<Vec<huddle_wire::Task>> {
    let deadline = Instant::now() + Duration::from_millis(plan.wait_ms);
    let _online = (plan.wait_ms > 0).then(|| state.presence.waiting(caller));
    let _waiting = (plan.wait_ms > 0).then(|| crate::metrics::LongPoll::start("claim"));
    let waiters = state.hub.claim_waiters(caller.team_id);
    let mut revocation = Revocation::new(&state.auth, caller, epoch);
    loop {
        if revocation.is_revoked(&state.auth) {
            return Err(ApiError::revoked_while_waiting());
        }
        // In the queue before looking, so a task made ready meanwhile still wakes this claimer.
        let ticket = (plan.wait_ms > 0).then(|| {
            let (agent, role) = (&caller.agent, caller.role.as_str());
            waiters.register(agent, role, &plan.prefixes, plan.project.as_ref())
        });
        let tasks = claim_delivered(state, caller, &plan, departed).await?;
        // Returning drops the ticket, which hands on any wake that arrived during the look.
        let Some(ticket) = ticket.filter(|_| tasks.is_empty()) else {
            return Ok(tasks);
        };
        // Left with the ticket: the write that makes a task ready for this claimer may claim it
        // for it there and then (a store that does not take parked claims wakes it instead).
        let mut handed = Handed::park(state, caller, &plan, &ticket);
        let (end, answer) = tokio::select! {
            _ = ticket.woken() => (End::Woken, None),
            answer = handed.answer(), if handed.is_parked() => (End::HandedOver, Some(answer)),
            _ = tokio::time::sleep_until(deadline) => (End::Stop, None),
            _ = state.shutdown.cancelled() => (End::Stop, None),
            _ = departed.cancelled() => (End::Stop, None),
            _ = revocation.revoked(&state.auth) => (End::Revoked, None),
        };
        // Whatever ended the wait, a claim the store already made with the parcel is answered
        // first (one batch at most), so it is delivered or released, never left held.
        let tasks = match answer {
            Some(answer) => answer?,
            None => handed.settle().await?,
        };
        // Claimed as the token was revoked (both ready at once): not handed to it.
        if end == End::Revoked || revocation.is_revoked(&state.auth) {
            release_undelivered(state, caller, tasks).await;
            return Err(ApiError::revoked_while_waiting());
        }
        if !tasks.is_empty() {
            return Ok(handed.delivered(departed, tasks).await);
        }
        match end {
            End::Woken => ticket.take_wake(), // used by the look that follows
            // Served nothing: the write that claimed for it failed; look again.
            End::HandedOver => {}
            End::Stop | End::Revoked => return Ok(Vec::new()),
        }
    }
}

/// Why a wait ended.
#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    Woken,
    HandedOver,
    Stop,
    Revoked,
}

/// A claim parked with the store while its claimer waits. Tasks claimed with it that never
/// reach the claimer (it left, or stopped waiting as they were claimed) are released, as a
/// look's are.
struct Handed {
    answer: Option<HandedOver>,
    /// Takes the parcel back; its own handle, so a dropped wait withdraws before its ticket
    /// leaves the queue.
    withdrawer: Withdrawer,
    state: AppState,
    caller: Caller,
}

impl Handed {
    fn park(state: &AppState, caller: &Caller, plan: &ClaimPlan, ticket: &WaitTicket) -> Handed {
        let (owner, holder) = (state.clone(), caller.clone());
        let runtime = tokio::runtime::Handle::current();
        let undelivered: Undelivered = Box::new(move |tasks| {
            runtime.spawn(async move { release_undelivered(&owner, &holder, tasks).await });
        });
        let claim = ClaimToPark {
            prefixes: &plan.prefixes,
            project: plan.project.as_ref(),
            lease_ms: plan.lease_ms,
            max: plan.max,
        };
        Handed {
            answer: state.store.park_claim(ticket, caller, claim, undelivered),
            withdrawer: ticket.withdrawer(),
            state: state.clone(),
            caller: caller.clone(),
        }
    }

    fn is_parked(&self) -> bool {
        self.answer.is_some()
    }

    /// The store's answer (pending for ever when nothing is parked).
    async fn answer(&mut self) -> StoreResult<Vec<huddle_wire::Task>> {
        let Some(answer) = self.answer.as_mut() else {
            return std::future::pending().await;
        };
        // A store that dropped the claim unanswered claimed nothing with it.
        let outcome = answer.await.unwrap_or_else(|_| Ok(Vec::new()));
        self.answer = None;
        outcome
    }

    /// Takes the claim back; if the store took it first, waits for its answer (one batch:
    /// a parcel it hands back unused is dropped, which answers it with nothing).
    async fn settle(&mut self) -> StoreResult<Vec<huddle_wire::Task>> {
        if !self.is_parked() || self.withdrawer.withdraw() {
            self.answer = None;
            return Ok(Vec::new());
        }
        self.answer().await
    }

    /// `tasks` for the claimer, unless it left meanwhile: then they are released.
    async fn delivered(
        &self,
        departed: &CancellationToken,
        tasks: Vec<huddle_wire::Task>,
    ) -> Vec<huddle_wire::Task> {
        if departed.is_cancelled() {
            release_undelivered(&self.state, &self.caller, tasks).await;
            return Vec::new();
        }
        tasks
    }
}

impl Drop for Handed {
    /// The claimer is gone before the answer was read: an answer already sent is released
    /// here; one not yet sent can no longer be, and the store releases it (`undelivered`).
    fn drop(&mut self) {
        let Some(mut answer) = self.answer.take() else {
            return;
        };
        if self.withdrawer.withdraw() {
            return; // taken back before the store could use it
        }
        answer.close();
        if let Ok(Ok(tasks)) = answer.try_recv() {
            if tasks.is_empty() {
                return;
            }
            let (state, caller) = (self.state.clone(), self.caller.clone());
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move { release_undelivered(&state, &caller, tasks).await });
            }
        }
    }
}

/// One look at the store whose tasks reach the caller or go back to the queue.
async fn claim_delivered(
    state: &AppState,
    caller: &Caller,
    plan: &ClaimPlan,
    departed: &CancellationToken,
) -> ApiResult<Vec<huddle_wire::Task>> {
    if departed.is_cancelled() {
        return Ok(Vec::new());
    }
    let (owner, look) = (state.clone(), caller.clone());
    let (prefixes, project) = (plan.prefixes.clone(), plan.project.clone());
    let (lease_ms, max) = (plan.lease_ms, plan.max);
    let mut claim = Box::pin(async move {
        let claimed = owner
            .store
            .claim_project_tasks(&look, prefixes, project, lease_ms, max)
            .await;
        (claimed, owner, look)
    });
    // A look the store answers at once (a search it knows is empty) claimed nothing and has
    // nothing to release: it needs no task of its own, nor the wake-ups between two threads
    // that one costs. Polled once here, then handed on whole, with nothing awaited between.
    let claimed = match (&mut claim).now_or_never() {
        Some((claimed, _, _)) => claimed,
        None => {
            let (hand_over, taken) = oneshot::channel();
            tokio::spawn(async move {
                let (claimed, owner, look) = claim.await;
                if let Err(Ok(tasks)) = hand_over.send(claimed) {
                    release_undelivered(&owner, &look, tasks).await;
                }
            });
            taken.await.map_err(|_| {
                StoreError::Internal("the claim's task ended without an answer".into())
            })?
        }
    };
    let tasks = claimed?;
    if departed.is_cancelled() && !tasks.is_empty() {
        release_undelivered(state, caller, tasks).await;
        return Ok(Vec::new());
    }
    Ok(tasks)
}

/// Gives back tasks claimed for a client that left: released, so no attempt is used and the
/// next claimer gets them now rather than after the lease.
async fn release_undelivered(state: &AppState, caller: &Caller, tasks: Vec<huddle_wire::Task>) {
    if tasks.is_empty() {
        return;
    }
    crate::metrics::claims_undelivered(tasks.len());
    for task in tasks {
        match state.store.release_task(caller, &task.id).await {
            Ok(_) => tracing::info!(
                agent = %caller.agent,
                task = %task.id,
                "released a task claimed for a client that left before the answer"
            ),
            // Left to its lease, as before this release existed.
            Err(e) => tracing::warn!(
                agent = %caller.agent,
                task = %task.id,
                error = %e,
                "could not release a task claimed for a client that left"
            ),
        }
    }
}
