//! Human gates on PostgreSQL: asking (the question and the new blocker), answering (the
//! question and, on reject, the cancelled task) and withdrawing, each in one transaction of
//! the team's writes.

use super::super::error::{StoreError, StoreResult};
use super::super::gate_decisions::{self, question_ids};
use super::super::gate_patch;
use super::super::gates::Expiry;
use super::super::gates::{self, content_hash, AskTerms, GateStore, OpenQuestion};
use super::super::rules::{self, quota};
use super::super::rules::{parse_json, TaskState};
use super::super::types::Caller;
use super::deps;
use super::rows::load_task;
use super::task_state::{self, save};
use super::tx::Tx;
use super::{task_create, tasks, PostgresStore};
use crate::config::LimitSettings as Limits;
use async_trait::async_trait;
use huddle_wire::{AnswerRequest, GateRequest, Task, TaskPatch};

#[async_trait]
impl GateStore for PostgresStore {
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
        self.batcher
            .write(caller.team_id, move |tx: &mut Tx| {
                let (caller, id, gate, limits) =
                    (caller.clone(), id.clone(), gate.clone(), limits.clone());
                Box::pin(async move { ask(tx, &caller, &id, &gate, default_max, &limits).await })
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
        self.batcher
            .write(caller.team_id, move |tx: &mut Tx| {
                let (caller, id, answer) = (caller.clone(), id.clone(), answer.clone());
                Box::pin(async move {
                    tx.lock_team(caller.team_id).await?;
                    let mut q = task_state::load(tx, caller.team_id, &id).await?;
                    let gated_id = gate_decisions::gated_id(&q)?;
                    let mut task = task_state::load(tx, caller.team_id, &gated_id).await?;
                    gate_decisions::decide(&mut q, &mut task, &answer, &caller, tx.now_ms())?;
                    // The task first, so completing the question never leaves a rejected task
                    // ready.
                    if gate_decisions::task_changed(&q, &task) {
                        save(tx, task, "task.updated").await?;
                    }
                    let q = save(tx, q, "task.completed").await?;
                    tx.touch_agent(caller.team_id, &caller.agent);
                    let task = load_task(tx.conn(), caller.team_id, &gated_id).await?;
                    Ok((q, task))
                })
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
        self.batcher
            .write(caller.team_id, move |tx: &mut Tx| {
                let (caller, id, gate, limits) =
                    (caller.clone(), id.clone(), gate.clone(), limits.clone());
                Box::pin(async move {
                    holder_asks(tx, &caller, &id, &gate, terms, default_max, &limits).await
                })
            })
            .await
    }

    async fn open_questions(&self) -> StoreResult<Vec<OpenQuestion>> {
        type Row = (
            i64,
            String,
            String,
            i64,
            String,
            Option<String>,
            Option<String>,
            Option<String>,
        );
        let rows: Vec<Row> = sqlx::query_as(gates::OPEN_QUESTIONS_SQL)
            .fetch_all(self.pool.read().await?.db())
            .await?;
        let rows = rows
            .into_iter()
            .map(
                |(team_id, team, id, created_at, metadata, g, status, holder)| {
                    let question = OpenQuestion {
                        team_id,
                        team,
                        id,
                        created_at,
                        metadata: parse_json(&metadata),
                        holder_left: false,
                    };
                    let blocked = g.map(|g| (g, status.unwrap_or_default(), holder));
                    (question, blocked)
                },
            )
            .collect();
        Ok(gates::fold_open_questions(rows))
    }

    async fn expire_gate(
        &self,
        team_id: i64,
        id: &str,
        now_ms: i64,
    ) -> StoreResult<(Expiry, Option<(Task, Task)>)> {
        let id = id.to_string();
        self.batcher
            .write(team_id, move |tx: &mut Tx| {
                let id = id.clone();
                Box::pin(async move {
                    tx.lock_team(team_id).await?;
                    let Some(mut q) = find_state(tx, team_id, &id).await? else {
                        return Ok((Expiry::NotDue, None));
                    };
                    let Ok(gated_id) = gate_decisions::gated_id(&q) else {
                        return Ok((Expiry::NotDue, None));
                    };
                    let mut task = task_state::load(tx, team_id, &gated_id).await?;
                    match gate_decisions::expire(&mut q, &mut task, now_ms)? {
                        Expiry::NotDue => Ok((Expiry::NotDue, None)),
                        Expiry::Withdrawn => {
                            let drops = gate_decisions::drops_when_withdrawn(&q);
                            let qid = q.id.clone();
                            save(tx, q, "task.updated").await?;
                            if drops {
                                drop_question(tx, team_id, &gated_id, &qid).await?;
                            }
                            Ok((Expiry::Withdrawn, None))
                        }
                        Expiry::Decided(decision) => {
                            if gate_decisions::task_changed(&q, &task) {
                                save(tx, task, "task.updated").await?;
                            }
                            let q = save(tx, q, "task.completed").await?;
                            let task = load_task(tx.conn(), team_id, &gated_id).await?;
                            Ok((Expiry::Decided(decision), Some((q, task))))
                        }
                    }
                })
            })
            .await
    }
}

/// Drops withdrawn question `qid` from task `id`'s blockers, and wakes a claimer if that left
/// the task ready (a holder's question whose holder released it).
async fn drop_question(tx: &mut Tx, team_id: i64, id: &str, qid: &str) -> StoreResult<()> {
    deps::remove_blocker(tx, team_id, id, qid).await?;
    for ready in deps::ready_among(tx, team_id, &[id.to_string()]).await? {
        tx.task_ready(team_id, ready);
    }
    Ok(())
}

/// The holder of task `id` asks `gate` mid-task ([`gates::holder_question`]): the question
/// becomes a blocker of the task (one open at a time), and the task's lease is kept until the
/// question's deadline plus the lease it resumes with.
async fn holder_asks(
    tx: &mut Tx,
    caller: &Caller,
    id: &str,
    gate: &GateRequest,
    terms: AskTerms,
    default_max: i64,
    limits: &Limits,
) -> StoreResult<(Task, Task)> {
    tx.lock_team(caller.team_id).await?;
    let mut task = task_state::load(tx, caller.team_id, id).await?;
    gates::check_askable(&task, caller)?;
    let questions = questions_of(tx, caller, id).await?;
    gate_decisions::check_no_open_ask(id, &questions)?;
    let gate = gate_decisions::prepare_ask(id, gate, &questions)?;
    let now = chrono::DateTime::from_timestamp_millis(tx.now_ms()).unwrap_or_else(chrono::Utc::now);
    let (new, lease) = gates::holder_question(&task, &gate, &caller.agent, terms, now)?;
    let add = quota::edges_usage(1);
    tx.budget(caller.team_id, limits).await?.check(&add)?;
    let blockers = load_task(tx.conn(), caller.team_id, id)
        .await?
        .blocked_by
        .len();
    rules::check_blocker_count(blockers + 1, limits)?;
    let asked = task_create::create(tx, caller, vec![new], default_max, limits)
        .await?
        .remove(0);
    let blocker = [asked.id.clone()];
    deps::add_blockers(
        tx,
        caller.team_id,
        id,
        &blocker,
        "id",
        limits.max_dependency_walk,
    )
    .await?;
    tx.charge(caller.team_id, &add);
    task.lease_expires_at = Some(task.lease_expires_at.map_or(lease, |at| at.max(lease)));
    tx.touch_agent(caller.team_id, &caller.agent);
    let task = save(tx, task, "task.updated").await?;
    Ok((asked, task))
}

/// Gates pending task `id` with `gate`: withdraws its open questions asked about an older
/// version of it (their decisions would be refused), then adds the new one as a blocker.
pub async fn ask(
    tx: &mut Tx,
    caller: &Caller,
    id: &str,
    gate: &GateRequest,
    default_max: i64,
    limits: &Limits,
) -> StoreResult<(Task, Task)> {
    tx.lock_team(caller.team_id).await?;
    let gated = task_state::load(tx, caller.team_id, id).await?;
    gates::check_gateable(id, gated.status)?;
    let questions = questions_of(tx, caller, id).await?;
    let gate = gate_decisions::prepare_ask(id, gate, &questions)?;
    let new = gates::question_task(&gated, &gate, &caller.agent)?;
    let asked = task_create::create(tx, caller, vec![new], default_max, limits)
        .await?
        .remove(0);
    let stale = gate_decisions::withdraw_stale(id, &content_hash(&gated), &asked.id, questions)?;
    let stale_ids = stale.iter().map(|q| q.id.clone()).collect();
    for q in stale {
        save(tx, q, "task.updated").await?;
    }
    let patch = TaskPatch {
        add_blocked_by: vec![asked.id.clone()],
        remove_blocked_by: stale_ids,
        ..TaskPatch::default()
    };
    let held = tasks::update(tx, caller, id, patch, None, limits).await?;
    Ok((asked, held))
}

/// The loaded `HUMAN-NNN` blockers of task `id`.
async fn questions_of(tx: &mut Tx, caller: &Caller, id: &str) -> StoreResult<Vec<TaskState>> {
    let blocked_by = load_task(tx.conn(), caller.team_id, id).await?.blocked_by;
    let mut questions = Vec::new();
    for qid in question_ids(&blocked_by) {
        questions.extend(find_state(tx, caller.team_id, qid).await?);
    }
    Ok(questions)
}

/// Refuses what only a person may do by `PATCH` ([`gate_patch::check_patch`]); loads
/// nothing for a patch that touches no question.
pub async fn check_patch(
    tx: &mut Tx,
    caller: &Caller,
    id: &str,
    patch: &TaskPatch,
) -> StoreResult<()> {
    if !gate_patch::patch_touches_questions(id, patch) {
        return Ok(());
    }
    // As answering does: a decision taken on another replica meanwhile is seen.
    tx.lock_team(caller.team_id).await?;
    let Some(target) = find_state(tx, caller.team_id, id).await? else {
        return Ok(()); // the update answers 404
    };
    let questions = questions_of(tx, caller, id).await?;
    gate_patch::check_patch(caller, &target, patch, &questions)
}

/// Withdraws the open questions that hold task `id`, which was just cancelled.
pub async fn withdraw_for(tx: &mut Tx, caller: &Caller, task: &Task) -> StoreResult<()> {
    for qid in question_ids(&task.blocked_by) {
        let Some(mut q) = find_state(tx, caller.team_id, qid).await? else {
            continue;
        };
        if parse_json(&q.metadata)["gate"]["for"] != task.id.as_str() {
            continue;
        }
        let why = format!("{} was cancelled", task.id);
        if gate_decisions::withdraw(&mut q, &why)? {
            save(tx, q, "task.updated").await?;
        }
    }
    Ok(())
}

/// Refuses to reopen task `id` when a person rejected it ([`gate_decisions::check_not_rejected`]).
pub async fn check_reopen(tx: &mut Tx, caller: &Caller, id: &str) -> StoreResult<()> {
    let questions = questions_of(tx, caller, id).await?;
    gate_decisions::check_not_rejected(id, &questions)
}

/// A question that may have been deleted meanwhile: `None` rather than 404.
async fn find_state(tx: &mut Tx, team_id: i64, id: &str) -> StoreResult<Option<TaskState>> {
    match task_state::load(tx, team_id, id).await {
        Ok(state) => Ok(Some(state)),
        Err(StoreError::NotFound { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}
