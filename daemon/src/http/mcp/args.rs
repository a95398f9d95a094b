//! The MCP tools' arguments: schemas from the wire types (and the HTTP handlers' query structs),
//! parsed with the API's body rules.

use crate::http::error::{ApiError, ApiResult};
use crate::http::extract::parse_value;
use huddle_wire::{NewTask, NewTasks, TaskPatch};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use std::borrow::Cow;
use std::marker::PhantomData;

/// A tool's arguments, kept as JSON until the tool parses them (`tools::run`), so bad ones are
/// refused like a bad API body (a tool error `invalid_field` naming the field) rather than as a
/// protocol error; the schema is `A`'s.
pub struct Args<A>(Value, PhantomData<A>);

impl<A> Args<A> {
    /// The arguments as sent; absent ones as `{}`, like an empty body.
    pub fn into_value(self) -> Value {
        if self.0.is_null() {
            json!({})
        } else {
            self.0
        }
    }
}

impl<'de, A> Deserialize<'de> for Args<A> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(|v| Args(v, PhantomData))
    }
}

impl<A: JsonSchema> JsonSchema for Args<A> {
    fn schema_name() -> Cow<'static, str> {
        A::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        A::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        A::json_schema(generator)
    }
}

/// `task_create`: one task or a list (created all or none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateArgs {
    /// A task object, or an array of them; `blockedBy` names tasks of the team or of the same
    /// list.
    // Read as JSON and parsed by [`new_tasks`] as the shape it is, so an error names the
    // field (an untagged enum's error names none).
    #[schemars(with = "NewTasks")]
    pub tasks: Value,
}

/// `tasks` as the shape it has: one task object, or an array of them (each an object: serde
/// would also read a task from an array, field by field).
pub fn new_tasks(tasks: Value) -> ApiResult<Vec<NewTask>> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Many {
        tasks: Vec<NewTask>,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct One {
        tasks: NewTask,
    }
    match tasks.as_array() {
        Some(list) => {
            if let Some(i) = list.iter().position(|t| !t.is_object()) {
                let field = format!("tasks[{i}]");
                let message = format!("{field}: each task must be a JSON object");
                return Err(ApiError::bad_request(&field, message));
            }
            Ok(parse_value::<Many>(json!({ "tasks": tasks }))?.tasks)
        }
        None => Ok(vec![parse_value::<One>(json!({ "tasks": tasks }))?.tasks]),
    }
}

/// A task by id.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskId {
    /// The task's id, e.g. `TEST-007`.
    pub id: String,
}

/// `task_update`: absent fields stay, `metadata` is merged, `owner: null` clears the owner.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UpdateArgs {
    /// The id of the task to edit, e.g. `TEST-007`.
    pub id: String,
    /// The fields to change; fields left out stay as they are.
    pub patch: TaskPatch,
    /// Refuse (`stale_version`) unless the task is at this version.
    #[serde(default)]
    pub if_match: Option<i64>,
}

/// `task_complete`: a held task, with an optional result.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompleteArgs {
    /// The id of a task you hold, e.g. `TEST-007`.
    pub id: String,
    /// What came of it, as any JSON value (a verdict, counts, a link); kept on the task.
    #[serde(default)]
    pub result: Option<Value>,
}

/// `task_fail`: a held task and why.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailArgs {
    /// The id of a task you hold, e.g. `TEST-007`.
    pub id: String,
    /// Why this attempt failed, in plain words; kept on the task.
    pub reason: String,
    /// `true` to give up on the task for good: it becomes failed and the tasks waiting on it
    /// stay blocked. Leave it out (or `false`) to let the task be tried again while it has
    /// attempts left.
    #[serde(default, rename = "final")]
    pub final_: bool,
}

/// `task_claim`: which tasks, how long to wait for one, and how long to hold it.
// Integers are read as the HTTP body's (`ClaimRequest`, `Heartbeat`) are: `30000.0` too.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClaimArgs {
    /// Id prefixes to take, e.g. `["TEST"]`; your role's usual prefixes when left out (a
    /// tester takes TEST, an executor QARUN).
    #[serde(default)]
    pub prefixes: Option<Vec<String>>,
    /// How long to wait for a task to become ready, in milliseconds, when none is ready now.
    /// 0 (the default) answers at once. The wait ends early if you cancel the call.
    #[serde(default, deserialize_with = "huddle_wire::whole::option")]
    pub wait_ms: Option<u64>,
    /// How long the claim holds before it lapses, in milliseconds (the daemon's MCP lease,
    /// 600000 by default: an LLM step). Any tool call of yours renews it.
    #[serde(default, deserialize_with = "huddle_wire::whole::option")]
    pub lease_ms: Option<u64>,
    /// Take up to this many tasks at once (1 by default).
    #[serde(default, deserialize_with = "huddle_wire::whole::option")]
    pub max: Option<u32>,
    /// Take only tasks of this project (their metadata `project`, 1–200 characters) and tasks
    /// that name no project; leave it out to take tasks of any project.
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    pub project: Option<String>,
    /// With `project`: take only that project's tasks, not those naming no project.
    #[serde(default)]
    pub strict_project: bool,
    /// The model you call on what you claim (1–200 characters): while the team's model
    /// budget is spent, TEST and QARUN tasks are not given to you (`budget_exceeded`).
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    pub model: Option<String>,
}

impl From<ClaimArgs> for huddle_wire::ClaimRequest {
    fn from(a: ClaimArgs) -> Self {
        huddle_wire::ClaimRequest {
            prefixes: a.prefixes,
            wait_ms: a.wait_ms,
            lease_ms: a.lease_ms,
            max: a.max,
            project: a.project,
            strict_project: a.strict_project,
            model: a.model,
        }
    }
}

/// `task_heartbeat`: keep holding a task.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HeartbeatArgs {
    /// The id of a task you hold, e.g. `TEST-007`.
    pub id: String,
    /// The new lease, counted from now, in milliseconds (the daemon's MCP lease, 600000 by
    /// default); the holder's heartbeat never shortens it.
    #[serde(default, deserialize_with = "huddle_wire::whole::option")]
    pub lease_ms: Option<u64>,
}

/// `task_release`: give a held task back.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReleaseArgs {
    /// The id of a task you hold, e.g. `TEST-007`.
    pub id: String,
    /// Why you give it back (optional); sent to the coordinators as a message.
    #[serde(default)]
    pub note: Option<String>,
}

/// No arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// `memory_get`: the whole document, or the value at a JSON Pointer.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryGetArgs {
    /// A JSON Pointer such as `/test_strategy/framework`; absent for the whole document.
    #[serde(default)]
    pub pointer: Option<String>,
}

/// `memory_patch`: an RFC 7396 merge patch, or an RFC 6902 JSON Patch with `jsonPatch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MemoryPatchArgs {
    /// A merge patch (objects merge, `null` deletes), or with `jsonPatch` a list of operations.
    pub patch: Value,
    /// `true` when `patch` is a list of RFC 6902 operations rather than a merge patch.
    #[serde(default)]
    pub json_patch: bool,
    /// Refuse (`stale_version`) unless the document is at this version.
    #[serde(default)]
    pub if_match: Option<i64>,
}

/// `history_get`: which answer of the test history.
#[derive(Debug, Default, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HistoryView {
    /// The project's kept runs, oldest first, with their pass rates (the trend).
    #[default]
    Runs,
    /// Tests that passed and failed on the same tree.
    Flaky,
    /// Tests failing in the latest run that passed the last time before.
    Regressions,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HistoryArgs {
    /// The project; the one posted to last when absent.
    pub project: Option<String>,
    /// `runs` (default), `flaky` or `regressions`.
    #[serde(default)]
    pub view: HistoryView,
    /// With `flaky`: only runs on this tree count.
    pub tree: Option<String>,
    /// Only the runs of this test tier: one tier's trend, flaky tests or regressions.
    pub tier: Option<HistoryTier>,
}

/// A test tier, as `huddle test --tiers` posts its runs.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HistoryTier {
    /// Unit tests.
    Unit,
    /// Property-based tests.
    Pbt,
    /// Integration tests.
    Integration,
    /// End-to-end (browser) tests.
    E2e,
}

impl HistoryTier {
    /// The name runs are stored under.
    pub fn as_str(self) -> &'static str {
        match self {
            HistoryTier::Unit => "unit",
            HistoryTier::Pbt => "pbt",
            HistoryTier::Integration => "integration",
            HistoryTier::E2e => "e2e",
        }
    }
}
