//! Questions for a person that carry a deadline: once it passes with no decision, the
//! question's `onDeadline` decision is taken for the person (`answeredBy: deadline`), so no gated
//! task waits forever unnoticed. A holder's question whose holder no longer holds the task is
//! withdrawn here too (within a second), so completing, failing or releasing a task costs no
//! extra read. Every replica sweeps; the store takes each decision once. Each
//! look also counts the open questions per team for `/metrics` ([`QuestionGauges`]), so a
//! scrape never waits on the tasks table itself.

use crate::store::gate_decisions::DEADLINE;
use crate::store::gate_messages::{answered_message, rejection_message};
use crate::store::gates::Expiry;
use crate::store::gates::OpenQuestion;
use crate::store::gates::{asker, due};
use crate::store::{Caller, Store};
use huddle_wire::{Decision, Role};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often open questions are looked at: a deadline is kept to about this.
const EVERY: Duration = Duration::from_secs(1);

/// The open questions per team as the last look saw them: how many, and when the oldest was
/// asked (ms). One entry per team with open questions, so it grows with teams, not questions.
#[derive(Debug, Default)]
pub struct QuestionGauges(Mutex<HashMap<String, (u64, i64)>>);

impl QuestionGauges {
    fn set(&self, open: &[OpenQuestion]) {
        let mut per_team: HashMap<String, (u64, i64)> = HashMap::new();
        for q in open {
            let entry = per_team.entry(q.team.clone()).or_insert((0, q.created_at));
            entry.0 += 1;
            entry.1 = entry.1.min(q.created_at);
        }
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = per_team;
    }

    /// `team`'s open questions and when the oldest was asked (ms), if it has any.
    pub fn of(&self, team: &str) -> Option<(u64, i64)> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(team)
            .copied()
    }
}

/// Takes due deadlines' decisions until `stop`, keeping `gauges` current.
pub async fn run(store: Arc<dyn Store>, gauges: Arc<QuestionGauges>, stop: CancellationToken) {
    let mut every = tokio::time::interval(EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = every.tick() => {}
            _ = stop.cancelled() => return,
        }
        if let Err(e) = sweep(&*store, &gauges).await {
            tracing::warn!(error = %e, "gate deadlines: cannot look at the open questions");
        }
    }
}

/// One look: the decision of every question whose deadline has passed.
pub async fn sweep(store: &dyn Store, gauges: &QuestionGauges) -> crate::store::StoreResult<()> {
    let now_ms = chrono::Utc::now().timestamp_millis();
    let open = store.open_questions().await?;
    gauges.set(&open);
    for q in open {
        if !q.holder_left && due(&q.metadata).is_none_or(|(at, _)| at > now_ms) {
            continue;
        }
        let taken = store.expire_gate(q.team_id, &q.id, now_ms).await;
        match taken {
            Ok((Expiry::Decided(decision), Some((question, task)))) => {
                tracing::info!(team = %q.team, question = %q.id, task = %task.id, "deadline passed: {} by default", decision.as_str());
                let by = Caller {
                    team_id: q.team_id,
                    team: q.team.clone(),
                    agent: DEADLINE.to_string(),
                    role: Role::Coordinator,
                };
                let message = match asker(&question.metadata) {
                    Some(holder) => Some(answered_message(&question, &task.id, holder)),
                    None if decision == Decision::Reject => {
                        let answer = question.result.as_ref().and_then(|r| r["answer"].as_str());
                        Some(rejection_message(&question, &task, DEADLINE, answer))
                    }
                    None => None,
                };
                if let Some(message) = message {
                    store.post_message(&by, message, None).await?;
                    crate::metrics::messages_posted(1);
                }
            }
            Ok((Expiry::Withdrawn, _)) if q.holder_left => {
                tracing::info!(team = %q.team, question = %q.id, "its holder no longer holds the task: withdrawn");
            }
            Ok((Expiry::Withdrawn, _)) => {
                tracing::info!(team = %q.team, question = %q.id, "deadline passed on a task changed since asking: withdrawn");
            }
            Ok(_) => {}
            // Another team's trouble (quota, a store hiccup) must not stop the sweep.
            Err(e) => {
                tracing::warn!(team = %q.team, question = %q.id, error = %e, "gate deadlines: cannot take the decision")
            }
        }
    }
    Ok(())
}
