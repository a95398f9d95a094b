//! The MCP tools: the API under the caller's role. Each checks the role with
//! [`authz::permit`] (the matrix the HTTP handlers use) and calls the function its HTTP handler
//! calls (`operations.rs` lists which), so every input rule holds on both surfaces; input
//! schemas come from the wire types through schemars.

use super::args::*;
use super::{answer, caller, departed};
use crate::http::authz::{self, Action};
use crate::http::error::ApiResult;
use crate::http::extract::parse_value;
use crate::http::{task_claims, tasks, AppState};
use crate::store::Caller;
use axum::http::request::Parts;
use huddle_wire::{ClaimedTasks, CompleteTask, FailTask, Heartbeat, ReleaseTask, Task};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler};
use serde::de::DeserializeOwned;
use serde_json::json;

pub(super) type ToolResult = Result<CallToolResult, ErrorData>;

/// The tool set; one per daemon, cloned for each request (the transport is stateless).
#[derive(Clone)]
pub struct Huddle {
    pub(super) state: AppState,
    tool_router: ToolRouter<Self>,
    renewals: std::sync::Arc<super::lease_renewal::Renewals>,
}

impl Huddle {
    pub fn new(state: AppState) -> Self {
        let mut tool_router = Self::tools();
        super::schemas::complete(&mut tool_router, &state.settings);
        Huddle {
            state,
            tool_router,
            renewals: Default::default(),
        }
    }

    /// Every tool, from each file's router.
    pub(super) fn tools() -> ToolRouter<Self> {
        Self::tool_router()
            + Self::team_router()
            + Self::memory_router()
            + Self::search_router()
            + Self::gate_router()
            + Self::team_msg_router()
            + Self::spend_router()
            + Self::readiness_router()
    }
}

/// The caller checked against the permission matrix (403 first, as over HTTP), the arguments
/// parsed, then `work` — as one tool answer.
pub(super) async fn run<A, T, F>(
    parts: &Parts,
    action: Action,
    args: Args<A>,
    work: impl FnOnce(Caller, A) -> F,
) -> ToolResult
where
    A: DeserializeOwned,
    T: serde::Serialize,
    F: std::future::Future<Output = ApiResult<T>>,
{
    let caller = caller(parts)?;
    let checked = authz::permit(&caller, action).and_then(|()| parse_value::<A>(args.into_value()));
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
        Answers {\"tasks\": [...]}.",
        annotations(
            title = "Create tasks",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
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
                let tasks = tasks::create_tasks(&self.state, &caller, tasks).await?;
                Ok(ClaimedTasks { tasks })
            },
        )
        .await
    }

    #[tool(
        description = "List the team's tasks in id order, filtered by status, owner, id \
        prefix, `ready` (pending with every blocker completed) or `claimedBy` (with \
        `status: in_progress` and your own name: the tasks you hold now). `next` is the `after` \
        of the following page. Compact: each task's id, subject, status, owner, holder and \
        lease while in progress, `blockedBy` (blockers not yet completed: empty when nothing \
        holds it back) and `doneBlockers` (completed ones); task_get reads a task whole.",
        annotations(title = "List tasks", read_only_hint = true, open_world_hint = false)
    )]
    async fn task_list(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<tasks::ListQuery>>,
    ) -> ToolResult {
        run(&parts, Action::ReadTasks, args, |caller, args| async move {
            let list = tasks::list_tasks(&self.state, &caller, args).await?;
            super::compact_tasks::compact(&self.state, &caller, list).await
        })
        .await
    }

    #[tool(
        description = "Read one task by id: its status, holder, lease, attempts, blockers, \
        result and failure reason.",
        annotations(title = "Read a task", read_only_hint = true, open_world_hint = false)
    )]
    async fn task_get(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<TaskId>>,
    ) -> ToolResult {
        run(&parts, Action::ReadTasks, args, |caller, args| async move {
            crate::http::gate_records::read_task(&self.state, caller.team_id, &args.id).await
        })
        .await
    }

    #[tool(
        description = "Edit a task: subject, description, status, owner, dependencies \
        (`addBlockedBy`, `removeBlockedBy`), metadata (merged). Setting a status by hand can \
        cancel or close a task for everyone.",
        annotations(
            title = "Edit a task",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn task_update(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<UpdateArgs>>,
    ) -> ToolResult {
        run(&parts, Action::EditTasks, args, |caller, args| async move {
            tasks::update_task(&self.state, &caller, &args.id, args.patch, args.if_match).await
        })
        .await
    }

    #[tool(
        description = "Claim the next ready task you may do (your role's prefixes unless \
        `prefixes` is given), waiting up to `waitMs` for one. A claim is a lease: you hold the \
        task for `leaseMs` (10 minutes by default: an LLM step) and must renew it before \
        `leaseExpiresAt`, for as long as you work on it: any tool call you make renews it, and \
        task_heartbeat does explicitly (every third of the lease is safe). If \
        the lease lapses one of the task's attempts is used up, the task goes back to the queue \
        for another agent (or fails, on its last attempt), and your task_complete is refused. Finish with task_complete, task_fail or \
        task_release. With `project`, you take only tasks whose metadata `project` is that \
        name or that name no project (with `strictProject`, only that project's). Answers \
        {\"tasks\": [...], \"lease\": {...}}: `tasks` is empty when nothing became ready in \
        time; one task unless `max` is given.",
        annotations(
            title = "Claim a task",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn task_claim(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<ClaimArgs>>,
    ) -> ToolResult {
        let epoch = auth_epoch(&self.state, &parts);
        let gone = departed(&parts);
        run(
            &parts,
            Action::ClaimTasks,
            args,
            |caller, args: ClaimArgs| async move {
                let state = &self.state;
                let mut args = args;
                args.lease_ms = args
                    .lease_ms
                    .or(Some(super::lease_renewal::mcp_lease_ms(state)));
                let lease_ms = task_claims::lease(state, args.lease_ms)?;
                let max_wait = state.settings.tasks.mcp_max_wait_ms;
                let tasks =
                    task_claims::claim_tasks(state, &caller, epoch, args.into(), max_wait, &gone)
                        .await?;
                Ok(claimed_with_lease(tasks, lease_ms))
            },
        )
        .await
    }

    #[tool(
        description = "Renew the lease on a task you hold: it now expires `leaseMs` from now \
        (10 minutes by default; your heartbeat never shortens it). Any tool call you make renews \
        your leases too; call this when you go long without one. Answers the task with its new \
        `leaseExpiresAt`.",
        annotations(
            title = "Keep a task",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn task_heartbeat(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<HeartbeatArgs>>,
    ) -> ToolResult {
        run(
            &parts,
            Action::ActOnClaims,
            args,
            |caller, args: HeartbeatArgs| async move {
                let mcp_lease = super::lease_renewal::mcp_lease_ms(&self.state);
                let req = Heartbeat {
                    lease_ms: args.lease_ms.or(Some(mcp_lease)),
                    workspace: None,
                };
                task_claims::heartbeat_task(&self.state, &caller, &args.id, req).await
            },
        )
        .await
    }

    #[tool(
        description = "Give a task you hold back to the queue, for someone else to take now; \
        no attempt is used. An optional `note` says why and reaches the coordinators as a \
        message.",
        annotations(
            title = "Give a task back",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn task_release(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<ReleaseArgs>>,
    ) -> ToolResult {
        run(
            &parts,
            Action::ActOnClaims,
            args,
            |caller, args: ReleaseArgs| async move {
                let req = ReleaseTask { note: args.note };
                task_claims::release_task(&self.state, &caller, &args.id, req).await
            },
        )
        .await
    }

    #[tool(
        description = "Complete a task you hold, with an optional result. Tasks that were \
        waiting on it may become ready.",
        annotations(
            title = "Complete a task",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn task_complete(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<CompleteArgs>>,
    ) -> ToolResult {
        run(
            &parts,
            Action::ActOnClaims,
            args,
            |caller, args: CompleteArgs| async move {
                let req = CompleteTask {
                    result: args.result,
                };
                task_claims::complete_task(&self.state, &caller, &args.id, req).await
            },
        )
        .await
    }

    #[tool(
        description = "Report that your attempt at a task you hold failed, saying why. While \
        the task has attempts left it goes back to the queue to be tried again (this attempt \
        counts); on its last attempt, or with `final: true`, it becomes failed for good and \
        the tasks waiting on it stay blocked. To hand a task over without using an attempt, \
        use task_release.",
        annotations(
            title = "Fail an attempt",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
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
                    final_: args.final_,
                    result: None,
                };
                task_claims::fail_task(&self.state, &caller, &args.id, req).await
            },
        )
        .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Huddle {
    /// Every call first renews the caller's leases when due ([`super::lease_renewal`]), then
    /// runs the tool.
    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        if let Some(caller) = context
            .extensions
            .get::<Parts>()
            .and_then(|p| caller(p).ok())
        {
            self.renewals.touch(&self.state, &caller).await;
        }
        let call = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        self.tool_router.call(call).await
    }

    /// The tools this token's role may call ([`super::tool_access`]); the list differs per
    /// caller, so it is never marked cacheable across callers.
    async fn list_tools(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, ErrorData> {
        let caller = context
            .extensions
            .get::<Parts>()
            .ok_or_else(|| ErrorData::internal_error("request without its HTTP parts", None))
            .and_then(caller)?;
        let mut tools = self.tool_router.list_all();
        tools.retain(|t| super::tool_access::may_call(&caller, &t.name));
        Ok(rmcp::model::ListToolsResult {
            result_type: Some(rmcp::model::ResultType::COMPLETE),
            tools,
            meta: None,
            next_cursor: None,
            ttl_ms: None,
            cache_scope: None,
        })
    }

    async fn list_prompts(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, ErrorData> {
        Ok(super::prompts::list())
    }

    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, ErrorData> {
        super::prompts::get(request).map(Into::into)
    }

    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_prompts()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("huddled", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "huddle: the team's shared task list (claim with leases, complete, fail), \
                 message bus and shared JSON memory. You act as the agent of your token.",
            )
    }
}

/// A claim's answer over MCP: the tasks, and while there are any, what their lease means.
fn claimed_with_lease(tasks: Vec<Task>, lease_ms: u64) -> serde_json::Value {
    let expires = tasks.first().and_then(|t| t.lease_expires_at.clone());
    let mut answer = json!({ "tasks": tasks });
    if let Some(expires_at) = expires {
        answer["lease"] = json!({
            "leaseMs": lease_ms,
            "expiresAt": expires_at,
            "renew": format!(
                "call task_heartbeat with the task's id before {expires_at} and then at least \
                 every {} ms while you work on it; when the lease lapses the task returns to \
                 the queue and your task_complete is refused",
                lease_ms / 3
            ),
        });
    }
    answer
}

/// The revocation epoch at which `authenticate` let the request in (so a long poll ends when
/// the token is revoked meanwhile).
pub(super) fn auth_epoch(state: &AppState, parts: &Parts) -> crate::http::AuthEpoch {
    parts
        .extensions
        .get::<crate::http::AuthEpoch>()
        .copied()
        .unwrap_or_else(|| state.auth.epoch())
}
