//! The daemon checks a completion's evidence itself: a task that requires it (its metadata's
//! `requireEvidence: true`, or an id prefix in `[tasks] evidence_prefixes`) completes only
//! when `result.evidence` names a run in the team's own test history that proves it — posted
//! by the agent holding the task, for this task, on the tree the result names, at or above
//! the task's gate, with every test the task targets passing, and held to where the task
//! began (`evidence_start.rs`): no test that passed in the claimant's first run for the
//! task failing, every acceptance test passing. A coordinator reading
//! "completed" on such a task can trust it without re-running anything; what the daemon cannot
//! know is whether the run's outcomes are what the suite really did (a worker could post any
//! outcomes), which SECURITY.md says.

use super::error::{ApiError, ApiResult};
use super::AppState;
use crate::store::test_history::StoredRun;
use crate::store::Caller;
use axum::http::StatusCode;
use huddle_wire::{codes, Task, TestOutcome};
use serde_json::{json, Value};

/// What marks a result's evidence as checked here (`result.evidence.checked`); the store
/// refuses to complete a task whose metadata requires evidence without it
/// (`TaskState::complete`), and a client's own mark is replaced.
pub const CHECKED_BY: &str = "huddled";

/// Checks `result` against the task's requirement and answers the result to store: with
/// `evidence.checked` set when the daemon checked it. A task is read only when it may require
/// evidence by its id's prefix or the result offers evidence; one whose metadata requires it
/// and offers none is refused by the store, which reads the task anyway.
pub async fn check(
    state: &AppState,
    caller: &Caller,
    id: &str,
    mut result: Option<Value>,
) -> ApiResult<Option<Value>> {
    let offered = result
        .as_mut()
        .and_then(|r| r.get_mut("evidence"))
        .and_then(Value::as_object_mut)
        .map(|e| e.remove("checked"))
        .is_some();
    if !offered && !prefix_requires(state, id) {
        return Ok(result);
    }
    let task = state.store.get_task(caller.team_id, id).await?;
    if !required(state, &task) {
        return Ok(result);
    }
    verify(state, caller, id, &task, result.as_ref()).await?;
    if let Some(e) = result
        .as_mut()
        .and_then(|r| r.get_mut("evidence"))
        .and_then(Value::as_object_mut)
    {
        e.insert("checked".into(), json!({"by": CHECKED_BY}));
    }
    Ok(result)
}

async fn verify(
    state: &AppState,
    caller: &Caller,
    id: &str,
    task: &Task,
    result: Option<&Value>,
) -> ApiResult<()> {
    let evidence = result.and_then(|r| r.get("evidence"));
    let run_id = evidence
        .and_then(|e| e.get("runId"))
        .and_then(Value::as_i64);
    let project = evidence
        .and_then(|e| e.get("project"))
        .and_then(Value::as_str);
    let (Some(run_id), Some(project)) = (run_id, project) else {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            codes::EVIDENCE_REQUIRED,
            format!(
                "task {id} completes only with evidence: `result.evidence` must name the test run \
                 that verified it (`runId` and `project`, as POST …/history/runs answered; the run \
                 posted with `task: \"{id}\"`)"
            ),
        ));
    };
    let runs = state.store.test_runs(caller.team_id, project, true).await?;
    let Some(run) = runs.iter().find(|r| r.summary.id == run_id) else {
        return Err(mismatch(
            id,
            format!("run {run_id} is not among project {project:?}'s kept runs"),
            json!({"runId": run_id, "project": project}),
        ));
    };
    let tree = evidence.and_then(|e| e.get("tree")).and_then(Value::as_str);
    let gate = quality_gate(state, task);
    // The claimant posts the run; a coordinator completing a held task completes on its run.
    let claimant = task.claimed_by.as_deref().unwrap_or(&caller.agent);
    proves(run, claimant, id, tree, gate, &targets(task))
        .and_then(|()| super::evidence_start::holds(&runs, run, claimant, task))
        .map_err(|(why, details)| mismatch(id, why, details))
}

/// Whether the task requires evidence.
fn required(state: &AppState, task: &Task) -> bool {
    task.metadata
        .get("requireEvidence")
        .and_then(Value::as_bool)
        == Some(true)
        || prefix_requires(state, &task.id)
}

/// Whether the daemon's `[tasks] evidence_prefixes` names the id's prefix.
fn prefix_requires(state: &AppState, id: &str) -> bool {
    let prefix = id.rsplit_once('-').map_or("", |(p, _)| p);
    state
        .settings
        .tasks
        .evidence_prefixes
        .iter()
        .any(|p| p == prefix)
}

/// The pass rate the run must reach: the task's `cycle.qualityGate`, else the daemon's.
fn quality_gate(state: &AppState, task: &Task) -> f64 {
    task.metadata
        .get("cycle")
        .and_then(|c| c.get("qualityGate"))
        .and_then(Value::as_f64)
        .unwrap_or(state.settings.tasks.evidence_quality_gate)
}

/// The tests the task names (`metadata.targets`): node ids, or files (every test in it).
fn targets(task: &Task) -> Vec<String> {
    task.metadata
        .get("targets")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Why `run` does not prove the completion, with details; `Ok` when it does.
fn proves(
    run: &StoredRun,
    agent: &str,
    task: &str,
    tree: Option<&str>,
    gate: f64,
    targets: &[String],
) -> Result<(), (String, Value)> {
    let s = &run.summary;
    let id = s.id;
    if s.agent != agent {
        return Err((
            format!(
                "run {id} was posted by {}, not by {agent}, who holds the task",
                s.agent
            ),
            json!({"runId": id, "postedBy": s.agent}),
        ));
    }
    if s.task.as_deref() != Some(task) {
        return Err((
            format!(
                "run {id} was posted for {}, not for this task",
                s.task.as_deref().unwrap_or("no task")
            ),
            json!({"runId": id, "runTask": s.task}),
        ));
    }
    if tree != Some(s.tree.as_str()) {
        return Err((
            format!(
                "run {id} ran on tree {}, but the result names {}",
                s.tree,
                tree.unwrap_or("none")
            ),
            json!({"runId": id, "runTree": s.tree, "resultTree": tree}),
        ));
    }
    if s.pass_rate < gate {
        return Err((
            format!(
                "run {id} passed {:.1}% of its tests, below the gate of {gate}%",
                s.pass_rate
            ),
            json!({"runId": id, "passRate": s.pass_rate, "gate": gate}),
        ));
    }
    for target in targets {
        let of_target: Vec<&(String, TestOutcome)> = run
            .outcomes
            .iter()
            .filter(|(nodeid, _)| {
                nodeid == target
                    || nodeid
                        .strip_prefix(target.as_str())
                        .is_some_and(|rest| rest.starts_with("::"))
            })
            .collect();
        let failing: Vec<&str> = of_target
            .iter()
            .filter(|(_, o)| *o != TestOutcome::Passed)
            .map(|(n, _)| n.as_str())
            .collect();
        if of_target.is_empty() || !failing.is_empty() {
            return Err((
                if of_target.is_empty() {
                    format!("run {id} has no test of the task's target {target}")
                } else {
                    format!(
                        "the task's target {target} does not pass in run {id}: {}",
                        failing.join(", ")
                    )
                },
                json!({"runId": id, "target": target, "notPassing": failing}),
            ));
        }
    }
    Ok(())
}

fn mismatch(task: &str, why: String, details: Value) -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        codes::EVIDENCE_MISMATCH,
        format!("task {task} cannot complete on this evidence: {why}"),
    )
    .with_details(details)
}
