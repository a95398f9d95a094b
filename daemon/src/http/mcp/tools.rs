//! The MCP tools: the API under the caller's role. Each checks the role with
//! [`authz::permit`] (the matrix the HTTP handlers use) and calls the handlers' own functions or
//! the same store methods; input schemas come from the wire types through schemars.

use super::{answer, caller};
use crate::http::authz::{self, Action};
use crate::http::error::ApiResult;
use crate::http::{memory, messages, task_claims, tasks, AppState};
use axum::http::request::Parts;
use huddle_wire::{
    BatchMessage, ClaimRequest, ClaimedTasks, CompleteTask, FailTask, InboxAck, InboxCursor,
    NewTasks, TaskPatch,
};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

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
    tasks: NewTasks,
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

/// The caller, checked against the permission matrix, then `work` — as one tool answer.
async fn run<T, F>(
    parts: &Parts,
    action: Action,
    work: impl FnOnce(crate::store::Caller) -> F,
) -> ToolResult
where
    T: serde::Serialize,
    F: std::future::Future<Output = ApiResult<T>>,
{
    let caller = caller(parts)?;
    if let Err(e) = authz::permit(&caller, action) {
        return answer::<T>(Err(e));
    }
    answer(work(caller).await)
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
        Parameters(args): Parameters<CreateArgs>,
    ) -> ToolResult {
        let tasks = match args.tasks {
            NewTasks::Many(tasks) => tasks,
            NewTasks::One(task) => vec![*task],
        };
        run(&parts, Action::CreateTasks, |caller| async move {
            let tasks = self.state.store.create_tasks(&caller, tasks).await?;
            Ok(ClaimedTasks { tasks })
        })
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
        Parameters(args): Parameters<tasks::ListQuery>,
    ) -> ToolResult {
        run(&parts, Action::ReadTasks, |caller| async move {
            tasks::list_tasks(&self.state, &caller, args).await
        })
        .await
    }

    #[tool(description = "Read one task by id.")]
    async fn task_get(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<TaskId>,
    ) -> ToolResult {
        run(&parts, Action::ReadTasks, |caller| async move {
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
        Parameters(args): Parameters<UpdateArgs>,
    ) -> ToolResult {
        run(&parts, Action::EditTasks, |caller| async move {
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
        Parameters(args): Parameters<ClaimRequest>,
    ) -> ToolResult {
        run(&parts, Action::ClaimTasks, |caller| async move {
            let tasks = task_claims::claim_tasks(&self.state, &caller, args).await?;
            Ok(ClaimedTasks { tasks })
        })
        .await
    }

    #[tool(description = "Complete a task you hold, with an optional result.")]
    async fn task_complete(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<CompleteArgs>,
    ) -> ToolResult {
        let CompleteTask { result } = CompleteTask {
            result: args.result,
        };
        run(&parts, Action::ActOnClaims, |caller| async move {
            Ok(self
                .state
                .store
                .complete_task(&caller, &args.id, result)
                .await?)
        })
        .await
    }

    #[tool(
        description = "Fail a task you hold, saying why; it returns to the queue while \
        attempts remain."
    )]
    async fn task_fail(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<FailArgs>,
    ) -> ToolResult {
        let req = FailTask {
            reason: args.reason,
        };
        run(&parts, Action::ActOnClaims, |caller| async move {
            task_claims::fail_task(&self.state, &caller, &args.id, req).await
        })
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
        Parameters(args): Parameters<BatchMessage>,
    ) -> ToolResult {
        run(&parts, Action::PostMessages, |caller| async move {
            let (message, key) = args.into_parts();
            let key = messages::idempotency_key("idempotencyKey", key.as_deref())?;
            let posted = self.state.store.post_message(&caller, message, key).await?;
            crate::metrics::messages_posted(usize::from(!posted.replayed));
            Ok(json!({ "message": posted.message, "replayed": posted.replayed }))
        })
        .await
    }

    #[tool(
        description = "List the team's messages in `seq` order, filtered by sender, \
        recipient or type; `next` is the `after` of the following page."
    )]
    async fn msg_list(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<messages::ListQuery>,
    ) -> ToolResult {
        run(&parts, Action::ReadMessages, |caller| async move {
            messages::list_messages(&self.state, &caller, args).await
        })
        .await
    }

    #[tool(
        description = "Your unacknowledged messages, waiting up to `waitMs` for a first \
        one. Reading does not move the cursor: inbox_ack does."
    )]
    async fn inbox_read(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<messages::InboxQuery>,
    ) -> ToolResult {
        run(&parts, Action::ReadInbox, |caller| async move {
            messages::read_inbox(&self.state, &caller, args).await
        })
        .await
    }

    #[tool(description = "Mark your inbox handled up to and including `seq`.")]
    async fn inbox_ack(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<InboxAck>,
    ) -> ToolResult {
        run(&parts, Action::AckInbox, |caller| async move {
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
        Parameters(args): Parameters<MemoryGetArgs>,
    ) -> ToolResult {
        run(&parts, Action::ReadMemory, |caller| async move {
            let memory = self.state.store.get_memory(caller.team_id).await?;
            match args.pointer.as_deref() {
                None | Some("") | Some("/") => Ok(serde_json::to_value(memory).unwrap_or_default()),
                Some(p) => Ok(json!({ "value": memory::memory_value(&memory, p)? })),
            }
        })
        .await
    }

    #[tool(
        description = "Change the shared memory with a merge patch (objects merge, null \
        deletes), or with `jsonPatch: true` an RFC 6902 list of operations applied all or none."
    )]
    async fn memory_patch(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<MemoryPatchArgs>,
    ) -> ToolResult {
        run(&parts, Action::PatchMemory, |caller| async move {
            memory::patch_memory(
                &self.state,
                &caller,
                args.patch,
                args.json_patch,
                args.if_match,
            )
            .await
        })
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
