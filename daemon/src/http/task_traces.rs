//! The daemon's spans of a task's attempts (`huddle_telemetry`): the create, each claim and
//! how the attempt ended, in the trace every process derives from the team, the task and the
//! attempt number, so replicas and workers need share nothing but the claim's `traceparent`.
//!
//! An attempt is numbered as the task counts them: `attempts + 1` while it is open. A release
//! does not use an attempt, so the claim after it continues the same trace. The attempt's root
//! span is recorded when the attempt becomes possible: at the create for the first, at a
//! failure that gives the task another try for the next.

use crate::store::Caller;
use huddle_telemetry::{KeyValue, TraceParent};
use huddle_wire::{Task, TaskStatus};
use std::time::SystemTime;

/// The open attempt of `task`.
fn attempt(caller: &Caller, task: &Task) -> TraceParent {
    TraceParent::attempt(&caller.team_id.to_string(), &task.id, task.attempts + 1)
}

fn task_attributes(caller: &Caller, task: &Task) -> Vec<KeyValue> {
    vec![
        KeyValue::new("huddle.team", caller.team.clone()),
        KeyValue::new("huddle.task.id", task.id.clone()),
        KeyValue::new("huddle.task.attempt", task.attempts + 1),
        KeyValue::new("huddle.agent", caller.agent.clone()),
    ]
}

/// The root of the attempt `task` is open for, and what made it possible (`cause`).
fn attempt_opened(caller: &Caller, task: &Task, cause: &'static str, started: SystemTime) {
    let root = attempt(caller, task);
    let mut attributes = task_attributes(caller, task);
    attributes.push(KeyValue::new("huddle.task.subject", task.subject.clone()));
    huddle_telemetry::record_attempt(&root, "task.attempt", started, attributes.clone());
    huddle_telemetry::record(Some(&root), cause, started, attributes);
}

/// Tasks just created: each opens its first attempt.
pub fn created(caller: &Caller, tasks: &[Task], started: SystemTime) {
    if !huddle_telemetry::enabled() {
        return;
    }
    for task in tasks {
        attempt_opened(caller, task, "task.create", started);
    }
}

/// Tasks just claimed: each carries its attempt's `traceparent` for the claimant (always, so a
/// worker that exports traces joins a daemon that does, and the other way round), and a
/// `task.claim` span is recorded under it.
pub fn claimed(caller: &Caller, tasks: &mut [Task], started: SystemTime) {
    for task in tasks {
        let parent = attempt(caller, task);
        task.traceparent = Some(parent.header());
        if huddle_telemetry::enabled() {
            huddle_telemetry::record(
                Some(&parent),
                "task.claim",
                started,
                task_attributes(caller, task),
            );
        }
    }
}

/// A held task completed, failed or released (`what`: `task.complete`, `task.fail`,
/// `task.release`); `before` is its attempts count before (a failure counts one).
pub fn closed(caller: &Caller, task: &Task, before: i64, what: &'static str, started: SystemTime) {
    if !huddle_telemetry::enabled() {
        return;
    }
    let parent = TraceParent::attempt(&caller.team_id.to_string(), &task.id, before + 1);
    let mut attributes = task_attributes(caller, task);
    attributes[2] = KeyValue::new("huddle.task.attempt", before + 1);
    attributes.push(KeyValue::new("huddle.task.status", task.status.as_str()));
    huddle_telemetry::record(Some(&parent), what, started, attributes);
    if what == "task.fail" && task.status == TaskStatus::Pending {
        attempt_opened(caller, task, "task.retry", SystemTime::now());
    }
}
