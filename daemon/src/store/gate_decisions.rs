//! What a person's answer does to a gate, written once for both backends: the checks that
//! refuse it (not a question, already answered, withdrawn, the task changed since it was
//! asked), approve/reject, and withdrawing the questions of a cancelled task. Backends load
//! the two [`TaskState`]s, call [`decide`], and save what it changed in one transaction.

use super::error::{StoreError, StoreResult};
use super::gates::{self, asker, check_text, content_hash, kind_of, person_only, Expiry};
use super::rules::{lease_until, parse_json, TaskState};
use super::types::Caller;
use huddle_wire::{
    codes, AnswerRequest, Decision, GateKind, GateRecord, GateRequest, GateStatus, Role, Task,
    TaskStatus,
};
use serde_json::json;

/// The id of the task question `q` holds, or 409 when `q` is not a question for a person.
pub fn gated_id(q: &TaskState) -> StoreResult<String> {
    let metadata = parse_json(&q.metadata);
    let is_question = q.owner.as_deref() == Some(gates::HUMAN) && metadata.get("gate").is_some();
    match metadata["gate"]["for"].as_str().filter(|_| is_question) {
        Some(id) => Ok(id.to_string()),
        None => Err(StoreError::conflict(
            codes::INVALID_TRANSITION,
            format!(
                "{} is not a question for a person (POST …/tasks/{{id}}/gate asks one)",
                q.id
            ),
        )),
    }
}

/// Checks `req` against question `q` and the task it holds, then applies it: the question
/// completed with `{answer, answeredBy, decision}`, and on `reject` of a gate the task
/// cancelled with the person's reason; a holder's question gives its task back the lease it
/// resumes with instead. Returns the decision taken (`None`: a plain answer to a question).
pub fn decide(
    q: &mut TaskState,
    task: &mut TaskState,
    req: &AnswerRequest,
    by: &Caller,
    now_ms: i64,
) -> StoreResult<Option<Decision>> {
    let metadata = parse_json(&q.metadata);
    check_person(q, &metadata, by)?;
    check_open(q, task, &metadata)?;
    apply(
        q,
        task,
        req,
        json!({ "answeredBy": by.agent, "answeredAs": by.role }),
        now_ms,
    )
}

/// Whether deciding `q` changed `task` so a backend saves it: a gate's rejection cancelled it,
/// or a holder's question gave it its lease back.
pub fn task_changed(q: &TaskState, task: &TaskState) -> bool {
    task.status == TaskStatus::Cancelled || asker(&parse_json(&q.metadata)).is_some()
}

/// Whether a withdrawn `q` is dropped from its task's blockers: a holder's question is, so the
/// task (released, or done) is never left waiting on it; a gate stays, holding the task until
/// it is asked again.
pub fn drops_when_withdrawn(q: &TaskState) -> bool {
    asker(&parse_json(&q.metadata)).is_some()
}

/// Who took a decision the deadline took: in the result as `answeredBy` and `answeredAs`.
pub const DEADLINE: &str = "deadline";

/// Takes question `q`'s deadline decision when its deadline is at or before `now_ms`. A
/// rejection holds whatever changed since asking (nothing goes ahead); an approval needs the
/// task as asked, else the question is withdrawn.
pub fn expire(q: &mut TaskState, task: &mut TaskState, now_ms: i64) -> StoreResult<Expiry> {
    let metadata = parse_json(&q.metadata);
    if let Some(asker) = asker(&metadata).filter(|a| !holds(task, a)) {
        let why = format!("{asker} no longer holds {}", task.id);
        return Ok(match withdraw(q, &why)? {
            true => Expiry::Withdrawn,
            false => Expiry::NotDue,
        });
    }
    let Some((at_ms, decision)) = gates::due(&metadata) else {
        return Ok(Expiry::NotDue);
    };
    if q.status != TaskStatus::Pending || at_ms > now_ms {
        return Ok(Expiry::NotDue);
    }
    let deadline = metadata["gate"]["deadline"].as_str().unwrap_or_default();
    let req = AnswerRequest {
        answer: Some(format!(
            "no decision by the deadline ({deadline}): {} by default",
            match decision {
                Decision::Approve => "approved",
                Decision::Reject => "rejected",
            }
        )),
        decision: Some(decision),
    };
    match check_open(q, task, &metadata) {
        Ok(()) => {}
        Err(StoreError::Conflict { details, .. }) if details["why"] == json!("changed") => {
            if decision == Decision::Approve {
                let why = format!(
                    "its deadline passed, but {} changed since it was asked",
                    task.id
                );
                withdraw(q, &why)?;
                return Ok(Expiry::Withdrawn);
            }
        }
        Err(StoreError::Conflict { .. }) => return Ok(Expiry::NotDue),
        Err(e) => return Err(e),
    }
    let by = json!({ "answeredBy": DEADLINE, "answeredAs": DEADLINE });
    apply(q, task, &req, by, now_ms)?;
    Ok(Expiry::Decided(decision))
}

/// Checks `req`'s shape against the question's kind and applies it, with `result` (who
/// decided) as the start of the question's result.
fn apply(
    q: &mut TaskState,
    task: &mut TaskState,
    req: &AnswerRequest,
    mut result: serde_json::Value,
    now_ms: i64,
) -> StoreResult<Option<Decision>> {
    let metadata = parse_json(&q.metadata);
    let asked_by_holder = asker(&metadata).is_some();
    if let Some(answer) = &req.answer {
        check_text("answer", answer)?;
    }
    match (req.decision, kind_of(&metadata), &req.answer) {
        (None, GateKind::Approval, _) => {
            return Err(StoreError::invalid(
                "decision",
                format!(
                    "{} asks for a decision: send \"decision\": \"approve\" or \"reject\" \
                     (an \"answer\" may go with either)",
                    q.id
                ),
            ))
        }
        (None, GateKind::Question, None) => {
            return Err(StoreError::invalid(
                "answer",
                "send an \"answer\", a \"decision\" (approve or reject), or both",
            ))
        }
        _ => {}
    }
    if let Some(answer) = &req.answer {
        result["answer"] = json!(answer);
    }
    if let Some(decision) = req.decision {
        result["decision"] = json!(decision);
    }
    if asked_by_holder {
        // The holder wakes to the decision and has this long to heartbeat again; a holder
        // that died meanwhile loses the task as any lapsed lease does.
        let lease = gates::resume_lease_ms(&metadata).unwrap_or(30_000);
        task.lease_expires_at = Some(lease_until(now_ms, lease));
    } else if req.decision == Some(Decision::Reject) {
        let reason = req
            .answer
            .clone()
            .unwrap_or_else(|| format!("rejected at {}", q.id));
        task.set_status(TaskStatus::Cancelled, false, &[])?;
        // After `set_status`, which clears a cancelled task's reason.
        task.failure_reason = Some(reason);
    }
    q.status = TaskStatus::Completed;
    q.result = Some(result.to_string());
    q.clear_claim();
    Ok(req.decision)
}

/// A person-only question is decided by a `lead` and no one else: checked first, so an agent
/// learns nothing more about the question than that it is not its to decide.
fn check_person(q: &TaskState, metadata: &serde_json::Value, by: &Caller) -> StoreResult<()> {
    if person_only(metadata) && by.role != Role::Lead {
        return Err(StoreError::Forbidden {
            code: codes::PERSON_REQUIRED,
            message: format!(
                "{} is for a person to decide: answer it with a lead's token (the dashboard, or \
                 `huddle answer` signed in as a lead), not a {}'s",
                q.id, by.role
            ),
        });
    }
    Ok(())
}

/// A decision is taken only on an open question, for a task still open and unchanged since.
fn check_open(q: &TaskState, task: &TaskState, metadata: &serde_json::Value) -> StoreResult<()> {
    let refuse = |message: String, why: &str| StoreError::Conflict {
        code: codes::INVALID_TRANSITION,
        message,
        details: json!({ "question": q.id, "task": task.id, "why": why }),
    };
    match q.status {
        TaskStatus::Pending => {}
        TaskStatus::Cancelled => {
            return Err(refuse(
                format!("{} was withdrawn and cannot be answered", q.id),
                "withdrawn",
            ))
        }
        closed => {
            return Err(StoreError::Conflict {
                code: codes::TASK_CLOSED,
                message: format!("{} is already {closed}", q.id),
                details: json!({ "status": closed }),
            })
        }
    }
    if task.status == TaskStatus::Cancelled {
        return Err(refuse(
            format!("{} is cancelled, so {} is withdrawn", task.id, q.id),
            "withdrawn",
        ));
    }
    if let Some(asker) = asker(metadata).filter(|a| !holds(task, a)) {
        return Err(refuse(
            format!(
                "{asker} no longer holds {}, so its question {} is withdrawn",
                task.id, q.id
            ),
            "left",
        ));
    }
    // Questions asked before decisions were bound carry no hash, and are answered as before.
    let asked = metadata["gate"]["taskHash"].as_str();
    if asked.is_some_and(|h| h != content_hash(task)) {
        return Err(refuse(
            format!(
                "{} changed since {} was asked; ask again (POST …/tasks/{}/gate) for a decision \
                 on it as it is now",
                task.id, q.id, task.id
            ),
            "changed",
        ));
    }
    Ok(())
}

/// Whether `agent` still holds `task` (in progress, claimed by it).
fn holds(task: &TaskState, agent: &str) -> bool {
    task.status == TaskStatus::InProgress && task.claimed_by.as_deref() == Some(agent)
}

/// The open question a holder asked about task `id`, if any: a holder waits on one at a time.
pub fn check_no_open_ask(id: &str, questions: &[TaskState]) -> StoreResult<()> {
    let open = questions.iter().find(|q| {
        let metadata = parse_json(&q.metadata);
        q.status == TaskStatus::Pending
            && metadata["gate"]["for"] == json!(id)
            && asker(&metadata).is_some()
    });
    match open {
        Some(q) => Err(StoreError::Conflict {
            code: codes::INVALID_TRANSITION,
            message: format!(
                "{id} already waits on {}: wait for its decision (GET …/tasks/{}/decision)",
                q.id, q.id
            ),
            details: json!({ "question": q.id, "task": id }),
        }),
        None => Ok(()),
    }
}

/// Withdraws open question `q` because of `why` (its task was cancelled, or it was asked
/// again): cancelled, with a reason that says so. `false` when `q` was not open.
pub fn withdraw(q: &mut TaskState, why: &str) -> StoreResult<bool> {
    if q.status != TaskStatus::Pending {
        return Ok(false);
    }
    q.set_status(TaskStatus::Cancelled, true, &[])?;
    q.failure_reason = Some(format!("withdrawn: {why}"));
    Ok(true)
}

/// The question ids among a task's blockers (`HUMAN-NNN`); which of them are questions for
/// this task is checked on the loaded question.
pub fn question_ids(blocked_by: &[String]) -> impl Iterator<Item = &String> {
    let prefix = format!("{}-", gates::PREFIX);
    blocked_by.iter().filter(move |b| b.starts_with(&prefix))
}

/// The record of one gate on `task_id` as a claim shows it, or `None` when `q` is no question
/// for that task.
pub fn record(q: &Task, task_id: &str) -> Option<GateRecord> {
    let gate = q.metadata.get("gate")?;
    if q.owner.as_deref() != Some(gates::HUMAN) || gate["for"] != json!(task_id) {
        return None;
    }
    let result = q.result.clone().unwrap_or_default();
    let status = match q.status {
        TaskStatus::Completed => GateStatus::Answered,
        TaskStatus::Cancelled | TaskStatus::Failed => GateStatus::Withdrawn,
        _ => GateStatus::Open,
    };
    let answered = status == GateStatus::Answered;
    let text = |key: &str| result[key].as_str().map(str::to_string);
    Some(GateRecord {
        id: q.id.clone(),
        question: q.description.clone(),
        kind: kind_of(&q.metadata),
        person_only: person_only(&q.metadata),
        deadline: gate["deadline"].as_str().map(str::to_string),
        on_deadline: serde_json::from_value(gate["onDeadline"].clone()).ok(),
        status,
        asked_by_holder: asker(&q.metadata).map(str::to_string),
        decision: serde_json::from_value(result["decision"].clone()).ok(),
        answer: text("answer"),
        answered_by: text("answeredBy"),
        answered_at: answered.then(|| q.updated_at.clone()),
    })
}

/// A rejected task stays closed: reopening it (`status: pending`) would hand a worker what a
/// person refused. `questions` are its loaded `HUMAN-NNN` blockers.
pub fn check_not_rejected(task_id: &str, questions: &[TaskState]) -> StoreResult<()> {
    for q in questions {
        let result = q.result.as_deref().map(parse_json).unwrap_or_default();
        if q.status == TaskStatus::Completed && result["decision"] == json!(Decision::Reject) {
            return Err(StoreError::conflict(
                codes::INVALID_TRANSITION,
                format!(
                    "{task_id} was rejected at {}; it is not reopened (create a new task, gated \
                     again if need be)",
                    q.id
                ),
            ));
        }
    }
    Ok(())
}

/// Whether `q` is an open person-only question holding task `id`.
pub(super) fn holds_for_person(q: &TaskState, id: &str) -> bool {
    let metadata = parse_json(&q.metadata);
    q.status == TaskStatus::Pending
        && metadata["gate"]["for"] == json!(id)
        && person_only(&metadata)
}

/// The gate as task `id` is asked it again. A task with an open person-only question stays
/// person-only: otherwise an agent could edit the task (withdrawing the stale question) and ask
/// a question it may decide; and so its new question may not be approved by a deadline (409:
/// the refusal comes from the task's state, not the request). `questions` are the loaded
/// `HUMAN-NNN` blockers of task `id`.
pub fn prepare_ask(
    id: &str,
    gate: &GateRequest,
    questions: &[TaskState],
) -> StoreResult<GateRequest> {
    let mut gate = gate.clone();
    if !gate.person_only && questions.iter().any(|q| holds_for_person(q, id)) {
        if gate.deadline.is_some() && gate.on_deadline == Some(Decision::Approve) {
            return Err(StoreError::conflict(
                codes::INVALID_TRANSITION,
                format!(
                    "{id} waits for a person's decision, so a question asked about it is \
                     person-only too, and a person-only gate is never approved by its deadline"
                ),
            ));
        }
        gate.person_only = true;
    }
    Ok(gate)
}

/// The open questions of task `id` asked about an older version of it (its content hash is now
/// `now`), withdrawn because `asked` asks again: their decisions would be refused. Returns
/// them, to be saved and dropped from the task's blockers.
pub fn withdraw_stale(
    id: &str,
    now: &str,
    asked: &str,
    questions: Vec<TaskState>,
) -> StoreResult<Vec<TaskState>> {
    let mut stale = Vec::new();
    for mut q in questions {
        let gate = parse_json(&q.metadata)["gate"].clone();
        let asked_about = gate["taskHash"].as_str();
        if gate["for"] != id || asked_about.is_none_or(|h| h == now) {
            continue;
        }
        if withdraw(&mut q, &format!("{id} changed, and {asked} asks again"))? {
            stale.push(q);
        }
    }
    Ok(stale)
}
