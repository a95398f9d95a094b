//! Human gates on SQLite: asking (the question and the new blocker), answering (the question
//! and, on reject, the cancelled task) and withdrawing, each inside one writer job.

use super::super::error::StoreResult;
use super::super::gate_decisions::{self, question_ids};
use super::super::gate_patch;
use super::super::gates::Expiry;
use super::super::gates::{self, content_hash, AskTerms, GateStore, OpenQuestion};
use super::super::rules::quota;

use super::super::rules::{self, parse_json, TaskState};
use super::super::types::Caller;
use super::deps;
use super::rows::{edges_of, find_state, load_state, load_task, touch_agent};
use super::task_state::save;
use super::usage;
use super::writer::WriteCtx;
use super::{tasks, SqliteStore};
use crate::config::LimitSettings as Limits;
use async_trait::async_trait;
use huddle_wire::{AnswerRequest, GateRequest, Task, TaskPatch};

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
                gate_decisions::decide(&mut q, &mut task, &answer, &caller, ctx.now_ms)?;
                // The task first, so completing the question never leaves a rejected task ready.
                if gate_decisions::task_changed(&q, &task) {
                    save(ctx, task, "task.updated")?;
                }
                let q = save(ctx, q, "task.completed")?;
                touch_agent(ctx, caller.team_id, &caller.agent)?;
                let task = load_task(ctx.conn, caller.team_id, &gated_id)?;
                Ok((q, task))
            })
            .await
    }

    async fn ask_holder(
        &self,
        caller: &Caller,
        id: &str,
        gate: &GateRequest,
        terms: AskTerms,
    ) -> StoreResult<(Task, Task)> {
        gates::check_text("question", &gate.question)?;
        let (caller, id, gate) = (caller.clone(), id.to_string(), gate.clone());
        let limits = self.options.limits.clone();
        let default_max = self.options.default_max_attempts;
        self.writer()?
            .write_team(caller.team_id, move |ctx| {
                holder_asks(ctx, &caller, &id, &gate, terms, default_max, &limits)
            })
            .await
    }

    async fn open_questions(&self) -> StoreResult<Vec<OpenQuestion>> {
        self.readers
            .read(|conn| {
                let mut stmt = conn.prepare_cached(gates::OPEN_QUESTIONS_SQL)?;
                let rows = stmt.query_map([], |r| {
                    let question = OpenQuestion {
                        team_id: r.get(0)?,
                        team: r.get(1)?,
                        id: r.get(2)?,
                        created_at: r.get(3)?,
                        metadata: parse_json(&r.get::<_, String>(4)?),
                        holder_left: false,
                    };
                    let blocked = match r.get::<_, Option<String>>(5)? {
                        Some(id) => Some((id, r.get(6)?, r.get(7)?)),
                        None => None,
                    };
                    Ok((question, blocked))
                })?;
                let rows = rows.collect::<Result<_, _>>()?;
                Ok(gates::fold_open_questions(rows))
            })
            .await
    }

    async fn expire_gate(
        &self,
        team_id: i64,
        id: &str,
        now_ms: i64,
    ) -> StoreResult<(Expiry, Option<(Task, Task)>)> {
        let id = id.to_string();
        self.writer()?
            .write_team(team_id, move |ctx| {
                let Some(mut q) = find_state(ctx.conn, team_id, &id)? else {
                    return Ok((Expiry::NotDue, None));
                };
                let Ok(gated_id) = gate_decisions::gated_id(&q) else {
                    return Ok((Expiry::NotDue, None));
                };
                let mut task = load_state(ctx.conn, team_id, &gated_id)?;
                match gate_decisions::expire(&mut q, &mut task, now_ms)? {
                    Expiry::NotDue => Ok((Expiry::NotDue, None)),
                    Expiry::Withdrawn => {
                        let drops = gate_decisions::drops_when_withdrawn(&q);
                        let qid = q.id.clone();
                        save(ctx, q, "task.updated")?;
                        if drops {
                            drop_question(ctx, team_id, &gated_id, &qid)?;
                        }
                        Ok((Expiry::Withdrawn, None))
                    }
                    Expiry::Decided(decision) => {
                        if gate_decisions::task_changed(&q, &task) {
                            save(ctx, task, "task.updated")?;
                        }
                        let q = save(ctx, q, "task.completed")?;
                        let task = load_task(ctx.conn, team_id, &gated_id)?;
                        Ok((Expiry::Decided(decision), Some((q, task))))
                    }
                }
            })
            .await
    }
}

/// Drops withdrawn question `qid` from task `id`'s blockers, and wakes a claimer if that left
/// the task ready (a holder's question whose holder released it).
fn drop_question(ctx: &mut WriteCtx<'_>, team_id: i64, id: &str, qid: &str) -> StoreResult<()> {
    deps::remove_blocker(ctx.conn, team_id, id, qid)?;
    if let Some(ready) = deps::ready_task(ctx.conn, team_id, id)? {
        ctx.ready(team_id, id, ready);
    }
    Ok(())
}

/// The holder of task `id` asks `gate` mid-task ([`gates::holder_question`]): the question
/// becomes a blocker of the task (one open at a time), and the task's lease is kept until the
/// question's deadline plus the lease it resumes with.
#[allow(clippy::too_many_arguments)]
pub fn holder_asks(
    ctx: &mut WriteCtx<'_>,
    caller: &Caller,
    id: &str,
    gate: &GateRequest,
    terms: AskTerms,
    default_max: i64,
    limits: &Limits,
) -> StoreResult<(Task, Task)> {
    let mut task = load_state(ctx.conn, caller.team_id, id)?;
    gates::check_askable(&task, caller)?;
    let questions = questions_of(ctx, caller, id)?;
    gate_decisions::check_no_open_ask(id, &questions)?;
    let gate = gate_decisions::prepare_ask(id, gate, &questions)?;
    let now = chrono::DateTime::from_timestamp_millis(ctx.now_ms).unwrap_or_else(chrono::Utc::now);
    let (new, lease) = gates::holder_question(&task, &gate, &caller.agent, terms, now)?;
    usage::budget(ctx.conn, caller.team_id, limits)?.check(&quota::edges_usage(1))?;
    let (blocked_by, _) = edges_of(ctx.conn, caller.team_id, id)?;
    rules::check_blocker_count(blocked_by.len() + 1, limits)?;
    let asked = tasks::create(ctx, caller, vec![new], default_max, limits)?.remove(0);
    let blocker = [asked.id.clone()];
    deps::add_blockers(
        ctx.conn,
        caller.team_id,
        id,
        &blocker,
        "id",
        limits.max_dependency_walk,
    )?;
    task.lease_expires_at = Some(task.lease_expires_at.map_or(lease, |at| at.max(lease)));
    touch_agent(ctx, caller.team_id, &caller.agent)?;
    let task = save(ctx, task, "task.updated")?;
    Ok((asked, task))
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
    let questions = questions_of(ctx, caller, id)?;
    let gate = gate_decisions::prepare_ask(id, gate, &questions)?;
    let new = gates::question_task(&gated, &gate, &caller.agent)?;
    let asked = tasks::create(ctx, caller, vec![new], default_max, limits)?.remove(0);
    let stale = gate_decisions::withdraw_stale(id, &content_hash(&gated), &asked.id, questions)?;
    let stale_ids = stale.iter().map(|q| q.id.clone()).collect();
    for q in stale {
        save(ctx, q, "task.updated")?;
    }
    let patch = TaskPatch {
        add_blocked_by: vec![asked.id.clone()],
        remove_blocked_by: stale_ids,
        ..TaskPatch::default()
    };
    let held = tasks::update(ctx, caller, id, patch, None, limits)?;
    Ok((asked, held))
}

/// The loaded `HUMAN-NNN` blockers of task `id`.
fn questions_of(ctx: &mut WriteCtx<'_>, caller: &Caller, id: &str) -> StoreResult<Vec<TaskState>> {
    let (blocked_by, _) = edges_of(ctx.conn, caller.team_id, id)?;
    let mut questions = Vec::new();
    for qid in question_ids(&blocked_by) {
        questions.extend(find_state(ctx.conn, caller.team_id, qid)?);
    }
    Ok(questions)
}

/// Refuses what only a person may do by `PATCH` ([`gate_patch::check_patch`]); loads
/// nothing for a patch that touches no question.
pub fn check_patch(
    ctx: &mut WriteCtx<'_>,
    caller: &Caller,
    id: &str,
    patch: &TaskPatch,
) -> StoreResult<()> {
    if !gate_patch::patch_touches_questions(id, patch) {
        return Ok(());
    }
    let Some(target) = find_state(ctx.conn, caller.team_id, id)? else {
        return Ok(()); // the update answers 404
    };
    let questions = questions_of(ctx, caller, id)?;
    gate_patch::check_patch(caller, &target, patch, &questions)
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
    let questions = questions_of(ctx, caller, id)?;
    gate_decisions::check_not_rejected(id, &questions)
}
