//! The MCP tools: the API under the caller's role. Each checks the role with
//! [`authz::permit`] (the matrix the HTTP handlers use) and calls the handlers' own functions or
//! the same store methods; input schemas come from the wire types through schemars.

use super::{answer, caller};
use crate::http::authz::{self, Action};
use crate::http::error::{ApiError, ApiResult};
use crate::http::extract::parse_value;
use crate::http::{memory, messages, task_claims, tasks, AppState};
use crate::store::Caller;
use axum::http::request::Parts;
use huddle_wire::{
    BatchMessage, ClaimRequest, ClaimedTasks, FailTask, InboxAck, InboxCursor, NewTask, NewTasks,
    TaskPatch,
};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};
use std::borrow::Cow;
use std::marker::PhantomData;

type ToolResult = Result<CallToolResult, ErrorData>;

/// The tool set; one per daemon, cloned for each request (the transport is stateless).
#[derive(Clone)]
pub struct Huddle {
    state: AppState,
    tool_router: ToolRouter<Self>,
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
    tasks: Value,
}

/// `tasks` as the shape it has: one task object, or an array of them (each an object: serde
/// would also read a task from an array, field by field).
fn new_tasks(tasks: Value) -> ApiResult<Vec<NewTask>> {
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
    id: String,
}

/// `task_update`: absent fields stay, `metadata` is merged, `owner: null` clears the owner.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UpdateArgs {
    id: String,
    patch: TaskPatch,
    /// Refuse (`stale_version`) unless the task is at this version.
    #[serde(default)]
    if_match: Option<i64>,
}

/// `task_complete`: a held task, with an optional result.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompleteArgs {
    id: String,
    #[serde(default)]
    result: Option<Value>,
}

/// `task_fail`: a held task and why; it is retried while attempts remain.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailArgs {
    id: String,
    reason: String,
}

/// `memory_get`: the whole document, or the value at a JSON Pointer.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryGetArgs {
    /// A JSON Pointer such as `/test_strategy/framework`; absent for the whole document.
    #[serde(default)]
    pointer: Option<String>,
}

/// `memory_patch`: an RFC 7396 merge patch, or an RFC 6902 JSON Patch with `jsonPatch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MemoryPatchArgs {
    /// A merge patch (objects merge, `null` deletes), or with `jsonPatch` a list of operations.
    patch: Value,
    #[serde(default)]
    json_patch: bool,
    /// Refuse (`stale_version`) unless the document is at this version.
    #[serde(default)]
    if_match: Option<i64>,
}

impl Huddle {
    pub fn new(state: AppState) -> Self {
        Huddle {
            state,
            tool_router: Self::tool_router(),
        }
    }
}

/// A tool's arguments, kept as JSON until [`run`] parses them, so bad ones are refused like a
/// bad API body (a tool error `invalid_field` naming the field) rather than as a protocol
/// error; the schema is `A`'s.
pub struct Args<A>(Value, PhantomData<A>);

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

/// The caller checked against the permission matrix (403 first, as over HTTP), the arguments
/// parsed, then `work` — as one tool answer.
async fn run<A, T, F>(
    parts: &Parts,
    action: Action,
    Args(raw, _): Args<A>,
    work: impl FnOnce(Caller, A) -> F,
) -> ToolResult
where
    A: DeserializeOwned,
    T: serde::Serialize,
    F: std::future::Future<Output = ApiResult<T>>,
{
    let caller = caller(parts)?;
    let checked = authz::permit(&caller, action).and_then(|()| {
        // No arguments at all means none given, like an empty body.
        parse_value::<A>(if raw.is_null() { json!({}) } else { raw })
    });
    match checked {
        Ok(args) => answer(work(caller, args).await),
        Err(e) => answer::<T>(Err(e)),
    }
}

#[tool_router]
impl Huddle {
    #[tool(
        description = "Create one task or several (all or none). Give `id` (TEST-007) or only \
        `prefix` (TEST) for the next number; `blockedBy` lists tasks that must complete first. \
        Answers {\"tasks\": [...]}."
    )]
    async fn task_create(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<CreateArgs>>,
    ) -> ToolResult {
        run(
            &parts,
            Action::CreateTasks,
            args,
            |caller, args| async move {
                let tasks = new_tasks(args.tasks)?;
                let tasks = self.state.store.create_tasks(&caller, tasks).await?;
                Ok(ClaimedTasks { tasks })
            },
        )
        .await
    }

    #[tool(
        description = "List the team's tasks in id order, filtered by status, owner, id \
        prefix, or `ready` (pending with every blocker completed). `next` is the `after` of the \
        following page."
    )]
    async fn task_list(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<tasks::ListQuery>>,
    ) -> ToolResult {
        run(&parts, Action::ReadTasks, args, |caller, args| async move {
            tasks::list_tasks(&self.state, &caller, args).await
        })
        .await
    }

    #[tool(description = "Read one task by id.")]
    async fn task_get(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<TaskId>>,
    ) -> ToolResult {
        run(&parts, Action::ReadTasks, args, |caller, args| async move {
            Ok(self.state.store.get_task(caller.team_id, &args.id).await?)
        })
        .await
    }

    #[tool(
        description = "Edit a task: subject, description, status, owner, dependencies \
        (`addBlockedBy`, `removeBlockedBy`), metadata (merged)."
    )]
    async fn task_update(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<UpdateArgs>>,
    ) -> ToolResult {
        run(&parts, Action::EditTasks, args, |caller, args| async move {
            let store = &self.state.store;
            Ok(store
                .update_task(&caller, &args.id, args.patch, args.if_match)
                .await?)
        })
        .await
    }

    #[tool(
        description = "Claim ready tasks (the role's default prefixes unless `prefixes` is \
        given), waiting up to `waitMs` for one. Answers {\"tasks\": [...]}: empty when nothing \
        became ready; one task unless `max` is given."
    )]
    async fn task_claim(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<ClaimRequest>>,
    ) -> ToolResult {
        run(
            &parts,
            Action::ClaimTasks,
            args,
            |caller, args| async move {
                let tasks = task_claims::claim_tasks(&self.state, &caller, args).await?;
                Ok(ClaimedTasks { tasks })
            },
        )
        .await
    }

    #[tool(description = "Complete a task you hold, with an optional result.")]
    async fn task_complete(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<CompleteArgs>>,
    ) -> ToolResult {
        run(
            &parts,
            Action::ActOnClaims,
            args,
            |caller, args| async move {
                Ok(self
                    .state
                    .store
                    .complete_task(&caller, &args.id, args.result)
                    .await?)
            },
        )
        .await
    }

    #[tool(
        description = "Fail a task you hold, saying why; it returns to the queue while \
        attempts remain."
    )]
    async fn task_fail(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<FailArgs>>,
    ) -> ToolResult {
        run(
            &parts,
            Action::ActOnClaims,
            args,
            |caller, args| async move {
                let req = FailTask {
                    reason: args.reason,
                };
                task_claims::fail_task(&self.state, &caller, &args.id, req).await
            },
        )
        .await
    }

    #[tool(
        description = "Post a message to an agent, a role, or `*` (everyone). `type` is \
        e.g. test_result, impl_progress, fix_required, error. A retry with the same \
        `idempotencyKey` answers with the stored message."
    )]
    async fn msg_post(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<BatchMessage>>,
    ) -> ToolResult {
        run(
            &parts,
            Action::PostMessages,
            args,
            |caller, args| async move {
                let (message, key) = args.into_parts();
                let key = messages::idempotency_key("idempotencyKey", key.as_deref())?;
                let posted = self.state.store.post_message(&caller, message, key).await?;
                crate::metrics::messages_posted(usize::from(!posted.replayed));
                Ok(json!({ "message": posted.message, "replayed": posted.replayed }))
            },
        )
        .await
    }

    #[tool(
        description = "List the team's messages in `seq` order, filtered by sender, \
        recipient or type; `next` is the `after` of the following page."
    )]
    async fn msg_list(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<messages::ListQuery>>,
    ) -> ToolResult {
        run(
            &parts,
            Action::ReadMessages,
            args,
            |caller, args| async move { messages::list_messages(&self.state, &caller, args).await },
        )
        .await
    }

    #[tool(
        description = "Your unacknowledged messages, waiting up to `waitMs` for a first \
        one. Reading does not move the cursor: inbox_ack does."
    )]
    async fn inbox_read(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<messages::InboxQuery>>,
    ) -> ToolResult {
        run(&parts, Action::ReadInbox, args, |caller, args| async move {
            messages::read_inbox(&self.state, &caller, args).await
        })
        .await
    }

    #[tool(description = "Mark your inbox handled up to and including `seq`.")]
    async fn inbox_ack(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<InboxAck>>,
    ) -> ToolResult {
        run(&parts, Action::AckInbox, args, |caller, args| async move {
            let cursor = self.state.store.ack_inbox(&caller, args.seq).await?;
            Ok(InboxCursor { cursor })
        })
        .await
    }

    #[tool(
        description = "Read the team's shared memory: the whole document with its version, \
        or {\"value\": ...} at a JSON Pointer."
    )]
    async fn memory_get(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<MemoryGetArgs>>,
    ) -> ToolResult {
        run(
            &parts,
            Action::ReadMemory,
            args,
            |caller, args| async move {
                let memory = self.state.store.get_memory(caller.team_id).await?;
                match args.pointer.as_deref() {
                    None | Some("") | Some("/") => {
                        Ok(serde_json::to_value(memory).unwrap_or_default())
                    }
                    Some(p) => Ok(json!({ "value": memory::memory_value(&memory, p)? })),
                }
            },
        )
        .await
    }

    #[tool(
        description = "Change the shared memory with a merge patch (objects merge, null \
        deletes), or with `jsonPatch: true` an RFC 6902 list of operations applied all or none."
    )]
    async fn memory_patch(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<MemoryPatchArgs>>,
    ) -> ToolResult {
        run(
            &parts,
            Action::PatchMemory,
            args,
            |caller, args| async move {
                memory::patch_memory(
                    &self.state,
                    &caller,
                    args.patch,
                    args.json_patch,
                    args.if_match,
                )
                .await
            },
        )
        .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Huddle {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("huddled", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "huddle: the team's shared task list (claim with leases, complete, fail), \
                 message bus and shared JSON memory. You act as the agent of your token.",
            )
    }
}
