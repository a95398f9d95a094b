//! Human gates: a task that waits for a person's answer before any worker may claim it.
//!
//! A gate is a task of its own, `HUMAN-NNN`, owned by the reserved name `human` (no agent may
//! take that name, so no worker ever claims it), with the question as its subject and
//! description, added to the gated task's `blockedBy` in the same transaction. Answering
//! completes it with `{answer, answeredBy}` as its result, which makes the gated task ready the
//! way any completed blocker does; the question and its answer stay in the task list.

use super::error::{StoreError, StoreResult};
use super::rules::TaskState;
use super::types::Caller;
use async_trait::async_trait;
use huddle_wire::{
    codes, AnswerRequest, Decision, GateKind, GateRequest, NewTask, Task, TaskStatus,
};
use serde_json::json;
use sha2::{Digest, Sha256};

/// The owner of every question for a person; agents may not take this name.
pub const HUMAN: &str = "human";
/// The id prefix of questions.
pub const PREFIX: &str = "HUMAN";
/// The longest question or answer, in characters.
pub const MAX_TEXT_CHARS: usize = 4_000;
/// The longest subject taken from a question's first line.
const SUBJECT_CHARS: usize = 200;

/// What a question's deadline did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// Not open, no deadline, or not yet.
    NotDue,
    /// The deadline's decision was taken.
    Decided(Decision),
    /// The task changed since asking, so approving it unseen is not done: the question is
    /// withdrawn and the task stays held until asked again.
    Withdrawn,
}

#[async_trait]
pub trait GateStore {
    /// Holds pending task `id` until a person answers `question`: creates the question task
    /// and adds it to `id`'s blockers, all or nothing. Returns (question, gated task).
    async fn gate_task(
        &self,
        caller: &Caller,
        id: &str,
        gate: &GateRequest,
    ) -> StoreResult<(Task, Task)>;

    /// Answers question `id` (`HUMAN-NNN`) by [`super::gate_decisions::decide`]: completes it,
    /// and on `reject` cancels the gated task, all or nothing. Returns (question, gated task).
    async fn answer_gate(
        &self,
        caller: &Caller,
        id: &str,
        answer: &AnswerRequest,
    ) -> StoreResult<(Task, Task)>;

    /// Every open question of every team (for `/metrics` and the deadline sweep): questions
    /// are few, and found by the `HUMAN` id prefix's index.
    async fn open_questions(&self) -> StoreResult<Vec<OpenQuestion>>;

    /// The holder of in-progress task `id` asks a person and waits ([`holder_question`]): the
    /// question is created as a blocker of the task and the task's lease is kept until the
    /// question's deadline (plus the lease it resumes with), all or nothing. Returns (question,
    /// task).
    async fn ask_holder(
        &self,
        caller: &Caller,
        id: &str,
        ask: &GateRequest,
        terms: AskTerms,
    ) -> StoreResult<(Task, Task)>;

    /// Takes open question `id`'s deadline decision if its deadline is at or before `now_ms`
    /// ([`super::gate_decisions::expire`]), all or nothing. Returns what happened, and the
    /// question and the gated task when a decision was taken.
    async fn expire_gate(
        &self,
        team_id: i64,
        id: &str,
        now_ms: i64,
    ) -> StoreResult<(Expiry, Option<(Task, Task)>)>;
}

/// A question waiting for a person, as the sweep and `/metrics` read it.
#[derive(Debug, Clone)]
pub struct OpenQuestion {
    pub team_id: i64,
    pub team: String,
    pub id: String,
    /// When it was asked, ms since the epoch.
    pub created_at: i64,
    pub metadata: serde_json::Value,
    /// Asked by a holder ([`asker`]) that no longer holds the task: the sweep withdraws it.
    pub holder_left: bool,
}

/// One task a question blocks: its id, status and holder.
pub type BlockedTask = (String, String, Option<String>);

/// The rows [`OPEN_QUESTIONS_SQL`] reads, folded into one [`OpenQuestion`] per question: the
/// question's columns, then the status and holder of one task it blocks (the one it asks
/// about is picked by id; a question someone also added as another task's blocker is one
/// row per such task).
pub fn fold_open_questions(rows: Vec<(OpenQuestion, Option<BlockedTask>)>) -> Vec<OpenQuestion> {
    let mut out: Vec<OpenQuestion> = Vec::new();
    for (mut q, blocked) in rows {
        let asked_about = q.metadata["gate"]["for"].as_str().map(str::to_string);
        let about = blocked.filter(|(id, _, _)| Some(id) == asked_about.as_ref());
        if let Some(asker) = asker(&q.metadata) {
            // A task it no longer blocks (deleted) counts as left too.
            q.holder_left = about.is_none_or(|(_, status, holder)| {
                status != TaskStatus::InProgress.as_str() || holder.as_deref() != Some(asker)
            });
        }
        match out
            .iter_mut()
            .find(|o| o.team_id == q.team_id && o.id == q.id)
        {
            Some(seen) => seen.holder_left &= q.holder_left,
            None => out.push(q),
        }
    }
    out
}

/// The query for [`GateStore::open_questions`] (the same text on both backends).
pub const OPEN_QUESTIONS_SQL: &str = "select t.id, t.name, k.id, k.created_at, k.metadata,
            g.id, g.status, g.claimed_by
     from teams t join tasks k on k.team_id = t.id and k.prefix = 'HUMAN'
     left join task_deps d on d.team_id = k.team_id and d.blocker_id = k.id
     left join tasks g on g.team_id = d.team_id and g.id = d.task_id
     where k.status = 'pending' and k.owner = 'human'";

/// What a decision is bound to: the gated task's subject, description and metadata as they
/// were when the question was asked (a short SHA-256). Re-serialising the metadata makes the
/// hash independent of how a backend stores the JSON text.
pub fn content_hash(task: &TaskState) -> String {
    let metadata = super::rules::parse_json(&task.metadata);
    let text = json!([task.subject, task.description, metadata]).to_string();
    hex::encode(&Sha256::digest(text.as_bytes())[..12])
}

/// Only a pending task is gated: one in progress has a worker on it (message it instead), a
/// finished one needs nothing more.
pub fn check_gateable(id: &str, status: TaskStatus) -> StoreResult<()> {
    match status {
        TaskStatus::Pending => Ok(()),
        TaskStatus::InProgress => Err(StoreError::conflict(
            codes::INVALID_TRANSITION,
            format!(
                "{id} is in progress: a gate holds a task before a worker claims it; message its \
                 holder, or release it first"
            ),
        )),
        closed => Err(StoreError::Conflict {
            code: codes::TASK_CLOSED,
            message: format!("task {id} is already {closed}"),
            details: json!({ "status": closed }),
        }),
    }
}

pub fn check_text(field: &str, text: &str) -> StoreResult<()> {
    if text.trim().is_empty() {
        return Err(StoreError::invalid(field, format!("{field} is empty")));
    }
    if text.chars().count() > MAX_TEXT_CHARS {
        return Err(StoreError::invalid(
            field,
            format!("{field} is longer than {MAX_TEXT_CHARS} characters"),
        ));
    }
    Ok(())
}

/// The question task for gating `gated` (its content as asked: [`content_hash`]).
pub fn question_task(
    gated: &TaskState,
    gate: &GateRequest,
    asked_by: &str,
) -> StoreResult<NewTask> {
    let question = gate.question.as_str();
    check_text("question", question)?;
    let deadline = deadline_of(gate, chrono::Utc::now())?;
    let first_line = question.trim().lines().next().unwrap_or_default();
    let mut subject: String = first_line.chars().take(SUBJECT_CHARS).collect();
    if first_line.chars().count() > SUBJECT_CHARS {
        subject.push('…');
    }
    let mut metadata = json!({ "gate": {
        "for": gated.id,
        "askedBy": asked_by,
        "kind": gate.kind,
        "personOnly": gate.person_only,
        "taskHash": content_hash(gated),
    } });
    if let Some((at, decision)) = deadline {
        metadata["gate"]["deadline"] = json!(at);
        metadata["gate"]["onDeadline"] = json!(decision);
    }
    Ok(NewTask {
        prefix: Some(PREFIX.into()),
        subject,
        description: Some(question.to_string()),
        owner: Some(HUMAN.into()),
        metadata: Some(metadata),
        ..NewTask::default()
    })
}

/// The furthest ahead a deadline may be.
const MAX_DEADLINE_DAYS: i64 = 366;

/// A gate's deadline, normalised to UTC (`…Z`), and the decision it takes; `None` without one.
/// Refused: a time that does not parse, is not in the future or is more than a year ahead; an
/// `onDeadline` without a deadline; a person-only gate approved by its deadline.
pub fn deadline_of(
    gate: &GateRequest,
    now: chrono::DateTime<chrono::Utc>,
) -> StoreResult<Option<(String, Decision)>> {
    let Some(text) = &gate.deadline else {
        return match gate.on_deadline {
            Some(_) => Err(StoreError::invalid(
                "onDeadline",
                "onDeadline goes with a deadline: send \"deadline\" too",
            )),
            None => Ok(None),
        };
    };
    let at = chrono::DateTime::parse_from_rfc3339(text)
        .map_err(|e| {
            StoreError::invalid(
                "deadline",
                format!(
                    "deadline {text:?} is not an RFC 3339 time ({e}), e.g. 2026-12-01T17:00:00Z"
                ),
            )
        })?
        .with_timezone(&chrono::Utc);
    if at <= now {
        return Err(StoreError::invalid(
            "deadline",
            format!("deadline {text} has passed"),
        ));
    }
    if at > now + chrono::Duration::days(MAX_DEADLINE_DAYS) {
        return Err(StoreError::invalid(
            "deadline",
            format!("deadline {text} is more than {MAX_DEADLINE_DAYS} days ahead"),
        ));
    }
    let decision = gate.on_deadline.unwrap_or(Decision::Reject);
    if gate.person_only && decision == Decision::Approve {
        return Err(StoreError::invalid(
            "onDeadline",
            "a person-only gate is approved by a person, never by its deadline: \
             onDeadline must be reject",
        ));
    }
    Ok(Some((
        at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        decision,
    )))
}

/// When question metadata's deadline falls (ms since the epoch) and what it decides.
pub fn due(metadata: &serde_json::Value) -> Option<(i64, Decision)> {
    let gate = &metadata["gate"];
    let at = chrono::DateTime::parse_from_rfc3339(gate["deadline"].as_str()?).ok()?;
    let decision = serde_json::from_value(gate["onDeadline"].clone()).unwrap_or(Decision::Reject);
    Some((at.timestamp_millis(), decision))
}

/// The holder that asked a question mid-task (`POST …/tasks/{id}/ask`); `None` for a gate.
pub fn asker(metadata: &serde_json::Value) -> Option<&str> {
    metadata["gate"]["asker"].as_str()
}

/// The lease a holder's task gets back once its question is decided (ms).
pub fn resume_lease_ms(metadata: &serde_json::Value) -> Option<u64> {
    metadata["gate"]["resumeLeaseMs"].as_u64()
}

/// What a holder's question may ask for: the longest wait (the team's setting, or the
/// daemon's) and the lease its task gets back once decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AskTerms {
    pub max_wait_ms: i64,
    pub resume_lease_ms: u64,
}

/// Only the holder of a task in progress asks mid-task: a coordinator gates a pending task
/// instead, and no one asks on another's behalf.
pub fn check_askable(task: &TaskState, caller: &Caller) -> StoreResult<()> {
    if task.status == TaskStatus::InProgress && task.claimed_by.as_deref() == Some(&caller.agent) {
        return Ok(());
    }
    let message = match (task.status, task.claimed_by.as_deref()) {
        (TaskStatus::InProgress, Some(holder)) => format!(
            "{} is held by {holder}: only its holder asks about it mid-task",
            task.id
        ),
        (TaskStatus::Pending, _) => format!(
            "{} is not claimed: a coordinator holds a pending task for a person with POST \
             …/tasks/{}/gate; a worker asks about a task it holds",
            task.id, task.id
        ),
        (status, _) => format!(
            "{} is {status}: only the holder of a task in progress asks",
            task.id
        ),
    };
    Err(StoreError::Conflict {
        code: codes::NOT_HOLDER,
        message,
        details: json!({ "claimedBy": task.claimed_by, "status": task.status }),
    })
}

/// The question the holder of `task` asks mid-task, and how long the task's lease is kept: to
/// the question's deadline (at most `terms.max_wait_ms` ahead; that far when none is given)
/// plus the lease it resumes with, so the holder wakes to the default decision in time.
pub fn holder_question(
    task: &TaskState,
    gate: &GateRequest,
    asker: &str,
    terms: AskTerms,
    now: chrono::DateTime<chrono::Utc>,
) -> StoreResult<(NewTask, i64)> {
    let mut gate = gate.clone();
    let latest = now + chrono::Duration::milliseconds(terms.max_wait_ms);
    let minutes = terms.max_wait_ms / 60_000;
    match deadline_of(&gate, now)? {
        Some((at, _)) => {
            let at = chrono::DateTime::parse_from_rfc3339(&at).map_err(|e| {
                StoreError::invalid("deadline", format!("deadline does not parse: {e}"))
            })?;
            if at > latest {
                return Err(StoreError::invalid(
                    "deadline",
                    format!(
                        "a holder waits at most {minutes} minutes on a question (the team's \
                         questions.maxWaitMinutes): set a deadline before {}",
                        latest.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                    ),
                ));
            }
        }
        None => {
            gate.deadline = Some(latest.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
        }
    }
    let mut new = question_task(task, &gate, asker)?;
    let metadata = new.metadata.get_or_insert_with(|| json!({}));
    metadata["gate"]["asker"] = json!(asker);
    metadata["gate"]["resumeLeaseMs"] = json!(terms.resume_lease_ms);
    let (deadline_ms, _) = due(metadata).expect("a holder's question always has a deadline");
    let lease = super::rules::lease_until(deadline_ms, terms.resume_lease_ms);
    Ok((new, lease))
}

/// Whether only a person (`lead`) may decide the question.
pub fn person_only(metadata: &serde_json::Value) -> bool {
    metadata["gate"]["personOnly"] == json!(true)
}

/// The kind a question was asked as; one asked before kinds existed is a `question`.
pub fn kind_of(metadata: &serde_json::Value) -> GateKind {
    serde_json::from_value(metadata["gate"]["kind"].clone()).unwrap_or_default()
}
