//! Asking a person before giving up under the gate, when the team says so
//! (`questions.askBelowGate`): the tester keeps its task while it waits
//! (`POST …/tasks/{id}/ask`), and a person's approval completes the task below the gate with
//! the decision in its report. Reject, withdrawal or the deadline's default: it fails as before.

use super::report::stop_text;
use crate::cycles::Finish;
use crate::wire::{AskRequest, Decision, GateKind, GateRecord, GateStatus};
use crate::worker::TaskContext;
use std::time::Duration;

/// One long poll for the decision: below the daemon's 60 s bound, so a call never outlives it.
const POLL: Duration = Duration::from_secs(50);

/// Asks whether task `task_id`, which ended below the gate as `finish` says, may complete
/// anyway, and waits for the decision. `None` when the gate held, the team does not ask, or
/// the question could not be asked (logged; the task then fails as it would have).
pub async fn below_gate(
    ctx: &TaskContext,
    task_id: &str,
    finish: &Finish,
    gate: f64,
) -> Option<GateRecord> {
    if finish.passed {
        return None;
    }
    let client = ctx.client();
    match client.me().await {
        Ok(me) if me.questions.ask_below_gate => {}
        Ok(_) => return None,
        Err(e) => {
            tracing::warn!("{task_id}: cannot read the team's question settings: {e}");
            return None;
        }
    }
    let ask = AskRequest {
        question: question(task_id, finish, gate),
        kind: GateKind::Approval,
        person_only: false,
        deadline: None,
        on_deadline: None,
        lease_ms: None,
    };
    let asked = match client.ask(task_id, &ask).await {
        Ok(asked) => asked.question,
        Err(e) => {
            tracing::warn!("{task_id}: cannot ask a person whether it may end below the gate: {e}");
            return None;
        }
    };
    tracing::info!(
        "{task_id}: below the gate; waiting for a person's decision on {}",
        asked.id
    );
    loop {
        let waited = tokio::select! {
            r = client.decision(&asked.id, POLL) => r,
            _ = ctx.cancelled() => return None,
        };
        match waited {
            Ok(record) if record.status == GateStatus::Open => continue,
            Ok(record) => {
                tracing::info!(
                    "{task_id}: {} {}",
                    asked.id,
                    match (record.status, record.decision) {
                        (GateStatus::Answered, Some(d)) => format!("decided: {}", d.as_str()),
                        (GateStatus::Answered, None) => "answered".to_string(),
                        _ => "withdrawn".to_string(),
                    }
                );
                return Some(record);
            }
            Err(e) => {
                tracing::warn!("{task_id}: cannot read the decision on {}: {e}", asked.id);
                return None;
            }
        }
    }
}

/// Whether `record` is a person's approval of ending below the gate.
pub fn approves(record: &GateRecord) -> bool {
    record.status == GateStatus::Answered && record.decision == Some(Decision::Approve)
}

fn question(task_id: &str, finish: &Finish, gate: f64) -> String {
    format!(
        "{task_id} ends below its quality gate: {}.\n\nComplete it anyway? Approve: it is \
         completed below the gate, with this decision in its report. Reject: it fails as it \
         would have.",
        stop_text(finish, gate)
    )
}
