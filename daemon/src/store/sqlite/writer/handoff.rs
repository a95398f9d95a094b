//! Claims served inside the write that makes their task ready.
//!
//! A claimer long-polling for work used to be woken after the commit that made a task ready and
//! then claim in a write of its own: two commits, two fsyncs, per task handed out. Now a waiting
//! claimer leaves its claim with its place in the queue ([`park`]). When a batch makes a task
//! ready, the writer takes the claim of the claimer that task would have woken, runs it after
//! the batch's jobs in the same transaction (in a savepoint of its own, through the same
//! `claims::claim` a look runs), and answers it once the commit is durable. The task's wake is
//! then not sent: its claimer holds it. A claim that took nothing goes back to its place.

use super::super::super::error::{StoreError, StoreResult};
use super::super::super::types::{Caller, ClaimToPark, HandedOver, Undelivered};
use super::super::claims;
use super::batch::exec_cached;
use super::{Effect, WriteCtx};
use crate::hub::{ClaimWaiters, Hub, ProjectFilter, WaitTicket};
use huddle_wire::Task;
use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use tokio::sync::oneshot;

/// A waiting claimer's claim, left with its ticket.
struct ParkedClaim {
    caller: Caller,
    prefixes: Vec<String>,
    project: Option<ProjectFilter>,
    lease_ms: u64,
    max: usize,
    reply: oneshot::Sender<StoreResult<Vec<Task>>>,
    undelivered: Undelivered,
}

/// Leaves the claim with `ticket`; the answer comes over the returned channel: the tasks
/// claimed (after the commit), or none when the batch that claimed them did not commit (look
/// again). Nothing comes while the claim is still parked.
pub fn park(
    ticket: &WaitTicket,
    caller: &Caller,
    claim: ClaimToPark<'_>,
    undelivered: Undelivered,
) -> HandedOver {
    let (reply, answer) = oneshot::channel();
    ticket.park(Box::new(ParkedClaim {
        caller: caller.clone(),
        prefixes: claim.prefixes.to_vec(),
        project: claim.project.cloned(),
        lease_ms: claim.lease_ms,
        max: claim.max,
        reply,
        undelivered,
    }));
    answer
}

/// A claim served in the batch, answered after its commit.
pub(super) struct Served {
    claim: ParkedClaim,
    outcome: StoreResult<Vec<Task>>,
}

impl Served {
    /// Answers the claimer: its tasks if the batch committed, else none (it looks again).
    /// Tasks nobody receives go to the claim's `undelivered`.
    pub(super) fn answer(self, committed: bool) {
        let outcome = if committed {
            self.outcome
        } else {
            Ok(Vec::new())
        };
        if let Err(Ok(tasks)) = self.claim.reply.send(outcome) {
            if !tasks.is_empty() {
                (self.claim.undelivered)(tasks);
            }
        }
    }
}

/// Runs, before the commit, the parked claims of the claimers the batch's ready tasks would
/// wake, and drops the wakes of the tasks they took. `more` tells whether the batch may still
/// take work; once it says no, the rest are woken after the commit as before.
pub(super) fn serve(
    ctx: &mut WriteCtx<'_>,
    hub: &Hub,
    mut more: impl FnMut() -> bool,
) -> Vec<Served> {
    let ready: Vec<(i64, crate::hub::ReadyTask, String)> = ctx
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::Ready { team_id, id, task } => Some((*team_id, task.clone(), id.clone())),
            _ => None,
        })
        .collect();
    let mut served = Vec::new();
    let mut taken: HashSet<(i64, String)> = HashSet::new();
    let mut waiters: Option<(i64, Arc<ClaimWaiters>)> = None;
    for (team_id, task, id) in ready {
        // SQLite rolled the transaction back under a served claim: a claim run now would run
        // outside it, each savepoint committing on its own while the batch fails.
        if ctx.conn.is_autocommit() {
            break;
        }
        if taken.contains(&(team_id, id.clone())) || !more() {
            continue;
        }
        let queue = match &waiters {
            Some((team, queue)) if *team == team_id => queue.clone(),
            _ => {
                let queue = hub.claim_waiters(team_id);
                waiters = Some((team_id, queue.clone()));
                queue
            }
        };
        let Some((ticket, parcel)) = queue.take_parcel(&task) else {
            continue;
        };
        let claim = match parcel.downcast::<ParkedClaim>() {
            Ok(claim) => *claim,
            Err(other) => {
                queue.served(ticket, Some(other)); // another store's: not ours to run
                continue;
            }
        };
        let outcome = run_in_savepoint(ctx, &claim);
        match &outcome {
            Ok(tasks) if tasks.is_empty() => {
                queue.served(ticket, Some(Box::new(claim)));
                continue;
            }
            Ok(tasks) => taken.extend(tasks.iter().map(|t| (team_id, t.id.clone()))),
            Err(_) => {}
        }
        queue.served(ticket, None);
        crate::metrics::claim_handed_over();
        served.push(Served { claim, outcome });
    }
    if !taken.is_empty() {
        ctx.effects.retain(|e| match e {
            Effect::Ready { team_id, id, .. } => !taken.contains(&(*team_id, id.clone())),
            _ => true,
        });
    }
    served
}

/// The claim in a savepoint of its own, as a job runs: a refusal rolls back alone, and so does
/// a panic (caught, as a job's is, so the writer lives on).
fn run_in_savepoint(ctx: &mut WriteCtx<'_>, claim: &ParkedClaim) -> StoreResult<Vec<Task>> {
    exec_cached(ctx.conn, "savepoint job").map_err(super::super::map_sqlite_error)?;
    let (mark, seqs_before) = (ctx.effects.len(), ctx.seqs.clone());
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        claims::claim(
            ctx,
            &claim.caller,
            &claim.prefixes,
            claim.project.as_ref(),
            claim.lease_ms,
            claim.max,
        )
    }))
    .unwrap_or_else(|_| {
        tracing::error!("a claim served in the writer panicked; rolled back");
        Err(StoreError::Internal("the claim failed".into()))
    });
    if outcome.is_err() {
        ctx.effects.truncate(mark);
        ctx.seqs = seqs_before;
        let _ = exec_cached(ctx.conn, "rollback to job");
    }
    let _ = exec_cached(ctx.conn, "release job");
    outcome
}
