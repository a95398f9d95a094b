//! What both roles do before their cycle: read the team's shared memory (framework choice,
//! `cycle_config`), detect the framework, and turn failures into an `error` message plus the
//! task's failure reason.

use super::drive::Interrupted;
use super::history::project_identity;
use super::report::Reporter;
use super::settings::RoleSettings;
use super::RoleError;
use crate::cycles::CycleConfig;
use crate::edits::Policy;
use crate::runners::detect::{detect, Overrides};
use crate::runners::Framework;
use crate::wire::Task;
use crate::worker::{HandlerError, TaskContext};
use serde_json::Value;

/// A task's starting point.
pub(crate) struct Prepared {
    pub framework: Framework,
    pub cycles: CycleConfig,
    pub reporter: Reporter,
    pub task_text: String,
    /// The project's stable identity: the task's `project` metadata, else the directory name.
    pub project: String,
}

/// Reads memory, detects the framework and applies the team's `cycle_config`.
pub(crate) async fn prepare(
    settings: &RoleSettings,
    task: &Task,
    ctx: &TaskContext,
) -> Result<Prepared, HandlerError> {
    let reporter = Reporter::new(ctx.client().clone(), &task.id, &settings.report_to);
    let memory = match ctx.client().memory().await {
        Ok(m) => m.doc,
        Err(e) => {
            tracing::warn!("cannot read shared memory ({e}); using defaults");
            Value::Null
        }
    };
    let detection = detect(
        &settings.project,
        &Overrides {
            flag: None,
            task_metadata: Some(&task.metadata),
            shared_memory: Some(&memory),
        },
    )
    .map_err(|source| RoleError::Runner {
        tool: String::new(),
        source,
    });
    let detection = match detection {
        Ok(d) => d,
        Err(e) => return Err(report_failure(&reporter, e).await),
    };
    tracing::info!(
        "{}: framework {} ({})",
        task.id,
        detection.framework,
        detection.reason
    );
    let mut cycles = settings.cycles.clone();
    if let Some(team) = memory.get("cycle_config") {
        if let Err(e) = cycles.apply(team, "shared memory `cycle_config`") {
            return Err(report_failure(&reporter, RoleError::Config(e.to_string())).await);
        }
    }
    let mut task_text = format!("{}\n{}", task.subject, task.description)
        .trim()
        .to_string();
    for line in super::decisions::lines(&task.gates) {
        tracing::info!("{}: decided before it began: {line}", task.id);
    }
    if let Some(decided) = super::decisions::for_prompt(&task.gates) {
        task_text.push_str("\n\n");
        task_text.push_str(&decided);
    }
    let project = project_identity(
        task.metadata.get("project").and_then(Value::as_str),
        &settings.project,
    )
    .await;
    Ok(Prepared {
        framework: detection.framework,
        cycles,
        reporter,
        task_text,
        project,
    })
}

/// Posts `error` for `e` and returns the task's failure reason.
/// Settings that cannot work fail the task for good; a runner that could not run fails this
/// attempt only (another worker, or a later try, may have what it lacked).
pub(crate) async fn report_failure(reporter: &Reporter, e: RoleError) -> HandlerError {
    let (code, tool) = e.code_and_tool();
    let message = e.to_string();
    reporter.error(code, &message, tool).await;
    match e {
        // Another try would run the same suite on the same tree.
        RoleError::Config(_) | RoleError::TreeWritten { .. } => {
            crate::worker::FinalFailure::new(message).into()
        }
        _ => message.into(),
    }
}

/// The failure reason for an interrupted cycle (posting `error` when the runner failed).
pub(crate) async fn interrupted(reporter: &Reporter, i: Interrupted) -> HandlerError {
    match i {
        Interrupted::Cancelled => "cancelled: the lease was lost or the worker is stopping".into(),
        Interrupted::Role(e) => report_failure(reporter, e).await,
    }
}

/// The task metadata's `cycle` object, or `null`.
pub(crate) fn task_cycle(task: &Task) -> &Value {
    task.metadata.get("cycle").unwrap_or(&Value::Null)
}

/// The role's edit policy as the task's metadata narrows or widens it: `scope` (path prefixes
/// fixes may touch), `allowTestEdits` and `allowTestConfigEdits` (both off unless `true`).
pub(crate) fn task_policy(task: &Task, role: Policy) -> Policy {
    let flag = |key: &str| task.metadata.get(key).and_then(Value::as_bool) == Some(true);
    let scope = task
        .metadata
        .get("scope")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        });
    Policy {
        scope,
        test_edits: role.test_edits || flag("allowTestEdits"),
        test_config_edits: role.test_config_edits || flag("allowTestConfigEdits"),
        ..role
    }
}

/// The tests a task runs: the metadata's `paths` (test files or directories), else the whole
/// suite.
pub(crate) fn task_suite(task: &Task) -> crate::runners::Selection {
    match task.metadata.get("paths").and_then(Value::as_array) {
        Some(paths) => crate::runners::Selection::Paths(
            paths
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
        ),
        None => crate::runners::Selection::All,
    }
}
