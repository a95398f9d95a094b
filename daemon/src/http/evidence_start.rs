//! Evidence held to where the task began: the claimant's first run for the task (the earliest
//! it posted) is the task's starting point. Every test that passed there must pass (or be
//! skipped) in the evidence run; and when the task brings acceptance tests (metadata
//! `acceptance`), the evidence run must hold tests the first run did not — the acceptance
//! tests, run beside the original ones — and every one of them must pass.

use crate::store::test_history::StoredRun;
use huddle_wire::{Task, TestOutcome};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Most ids named in a refusal.
const MAX_IDS: usize = 20;

/// Why `run` does not hold against the task's start, with details; `Ok` when it does.
pub(super) fn holds(
    runs: &[StoredRun],
    run: &StoredRun,
    claimant: &str,
    task: &Task,
) -> Result<(), (String, Value)> {
    let id = run.summary.id;
    let first = runs
        .iter()
        .filter(|r| r.summary.agent == claimant && r.summary.task.as_deref() == Some(&task.id))
        .min_by_key(|r| r.summary.id);
    let acceptance = task.metadata.get("acceptance").is_some();
    let Some(first) = first.filter(|f| f.summary.id != id) else {
        if acceptance {
            return Err((
                format!(
                    "run {id} is the only run posted for the task, so it cannot show the \
                     acceptance tests beside the tests the task began with"
                ),
                json!({"runId": id}),
            ));
        }
        return Ok(());
    };
    let now: BTreeMap<&str, TestOutcome> =
        run.outcomes.iter().map(|(n, o)| (n.as_str(), *o)).collect();
    let broken: Vec<&str> = first
        .outcomes
        .iter()
        .filter(|(_, o)| *o == TestOutcome::Passed)
        .map(|(n, _)| n.as_str())
        .filter(|n| !matches!(now.get(n), Some(TestOutcome::Passed | TestOutcome::Skipped)))
        .collect();
    if !broken.is_empty() {
        return Err((
            format!(
                "{} test(s) that passed in the task's first run (run {}) fail or are missing in \
                 run {id}: {}",
                broken.len(),
                first.summary.id,
                broken[..broken.len().min(MAX_IDS)].join(", ")
            ),
            json!({"runId": id, "firstRunId": first.summary.id, "broken": &broken[..broken.len().min(MAX_IDS)]}),
        ));
    }
    if acceptance {
        let before: std::collections::BTreeSet<&str> =
            first.outcomes.iter().map(|(n, _)| n.as_str()).collect();
        let added: Vec<(&str, TestOutcome)> = run
            .outcomes
            .iter()
            .filter(|(n, _)| !before.contains(n.as_str()))
            .map(|(n, o)| (n.as_str(), *o))
            .collect();
        let failing: Vec<&str> = added
            .iter()
            .filter(|(_, o)| *o != TestOutcome::Passed)
            .map(|(n, _)| *n)
            .collect();
        if added.is_empty() || !failing.is_empty() {
            return Err((
                if added.is_empty() {
                    format!(
                        "run {id} holds no acceptance test (no test the task's first run lacked)"
                    )
                } else {
                    format!(
                        "{} acceptance test(s) do not pass in run {id}: {}",
                        failing.len(),
                        failing[..failing.len().min(MAX_IDS)].join(", ")
                    )
                },
                json!({"runId": id, "acceptanceTests": added.len(), "notPassing": &failing[..failing.len().min(MAX_IDS)]}),
            ));
        }
    }
    Ok(())
}
