//! Human gates on SQLite: asking (the question and the new blocker), answering (the question
//! and, on reject, the cancelled task) and withdrawing, each inside one writer job.

use super::super::gate_decisions::{self, question_ids};
use super::super::gates::{self, content_hash, GateStore};
use super::super::rules::parse_json;
use super::super::{Caller, StoreResult};
use super::rows::{edges_of, find_state, load_state, load_task, touch_agent};
use super::task_state::save;
use super::writer::WriteCtx;
use super::{tasks, SqliteStore};
use crate::config::LimitSettings as Limits;
use async_trait::async_trait;
use huddle_wire::{AnswerRequest, GateRequest, Task, TaskPatch, TaskStatus};

#[async_trait]
impl GateStore for SqliteStore {
    async fn gate_task(
        &self,
        caller: &Caller,
        id: &str,
        gate: &GateRequest,
    ) -> StoreResult<(Task, Task)> {
        gates::check_text("question", &gate.question)?;
        let (caller, id, gate) = (caller.clone(), id.to_string(), gate.clone());
        let limits = self.options.limits.clone();
        let default_max = self.options.default_max_attempts;
        self.writer()?
            .write_team(caller.team_id, move |ctx| {
                ask(ctx, &caller, &id, &gate, default_max, &limits)
            })
            .await
    }

    async fn answer_gate(
        &self,
        caller: &Caller,
        id: &str,
        answer: &AnswerRequest,
    ) -> StoreResult<(Task, Task)> {
        let (caller, id, answer) = (caller.clone(), id.to_string(), answer.clone());
        self.writer()?
            .write_team(caller.team_id, move |ctx| {
                let mut q = load_state(ctx.conn, caller.team_id, &id)?;
                let gated_id = gate_decisions::gated_id(&q)?;
                let mut task = load_state(ctx.conn, caller.team_id, &gated_id)?;
                gate_decisions::decide(&mut q, &mut task, &answer, &caller.agent)?;
                // The task first, so completing the question never leaves a rejected task ready.
                if task.status == TaskStatus::Cancelled {
                    save(ctx, task, "task.updated")?;
                }
                let q = save(ctx, q, "task.completed")?;
                touch_agent(ctx, caller.team_id, &caller.agent)?;
                let task = load_task(ctx.conn, caller.team_id, &gated_id)?;
                Ok((q, task))
            })
            .await
    }
}

/// Gates pending task `id` with `gate`: withdraws its open questions asked about an older
/// version of it (their decisions would be refused), then adds the new one as a blocker.
pub fn ask(
    ctx: &mut WriteCtx<'_>,
    caller: &Caller,
    id: &str,
    gate: &GateRequest,
    default_max: i64,
    limits: &Limits,
) -> StoreResult<(Task, Task)> {
    let gated = load_state(ctx.conn, caller.team_id, id)?;
    gates::check_gateable(id, gated.status)?;
    let new = gates::question_task(&gated, gate, &caller.agent)?;
    let asked = tasks::create(ctx, caller, vec![new], default_max, limits)?.remove(0);
    let (blocked_by, _) = edges_of(ctx.conn, caller.team_id, id)?;
    let now = content_hash(&gated);
    let mut stale = Vec::new();
    for qid in question_ids(&blocked_by) {
        let Some(mut q) = find_state(ctx.conn, caller.team_id, qid)? else {
            continue;
        };
        let gate = parse_json(&q.metadata)["gate"].clone();
        let asked_about = gate["taskHash"].as_str();
        if gate["for"] != id || asked_about.is_none_or(|h| h == now) {
            continue;
        }
        let why = format!("{id} changed, and {} asks again", asked.id);
        if gate_decisions::withdraw(&mut q, &why)? {
            save(ctx, q, "task.updated")?;
            stale.push(qid.clone());
        }
    }
    let patch = TaskPatch {
        add_blocked_by: vec![asked.id.clone()],
        remove_blocked_by: stale,
        ..TaskPatch::default()
    };
    let held = tasks::update(ctx, caller, id, patch, None, limits)?;
    Ok((asked, held))
}

/// Withdraws the open questions that hold task `id`, which was just cancelled.
pub fn withdraw_for(ctx: &mut WriteCtx<'_>, caller: &Caller, task: &Task) -> StoreResult<()> {
    for qid in question_ids(&task.blocked_by) {
        let Some(mut q) = find_state(ctx.conn, caller.team_id, qid)? else {
            continue;
        };
        if parse_json(&q.metadata)["gate"]["for"] != task.id.as_str() {
            continue;
        }
        let why = format!("{} was cancelled", task.id);
        if gate_decisions::withdraw(&mut q, &why)? {
            save(ctx, q, "task.updated")?;
        }
    }
    Ok(())
}

/// Refuses to reopen task `id` when a person rejected it ([`gate_decisions::check_not_rejected`]).
pub fn check_reopen(ctx: &mut WriteCtx<'_>, caller: &Caller, id: &str) -> StoreResult<()> {
    let (blocked_by, _) = edges_of(ctx.conn, caller.team_id, id)?;
    let mut questions = Vec::new();
    for qid in question_ids(&blocked_by) {
        questions.extend(find_state(ctx.conn, caller.team_id, qid)?);
    }
    gate_decisions::check_not_rejected(id, &questions)
}
