//! The MCP tools: the API under the caller's role. Each checks the role with
//! [`authz::permit`] (the matrix the HTTP handlers use) and calls the handlers' own functions or
//! the same store methods; input schemas come from the wire types through schemars.

use super::args::*;
use super::{answer, caller};
use crate::http::authz::{self, Action};
use crate::http::error::ApiResult;
use crate::http::extract::parse_value;
use crate::http::{memory, messages, task_claims, tasks, test_history, AppState};
use crate::store::Caller;
use axum::http::request::Parts;
use huddle_wire::{
    BatchMessage, ClaimRequest, ClaimedTasks, FailTask, InboxAck, InboxCursor, NewTestRun,
};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler};
use serde::de::DeserializeOwned;
use serde_json::json;

type ToolResult = Result<CallToolResult, ErrorData>;

/// The tool set; one per daemon, cloned for each request (the transport is stateless).
#[derive(Clone)]
pub struct Huddle {
    state: AppState,
    tool_router: ToolRouter<Self>,
}

impl Huddle {
    pub fn new(state: AppState) -> Self {
        Huddle {
            state,
            tool_router: Self::tool_router(),
        }
    }
}

/// The caller checked against the permission matrix (403 first, as over HTTP), the arguments
/// parsed, then `work` — as one tool answer.
async fn run<A, T, F>(
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
        let epoch = auth_epoch(&self.state, &parts);
        run(
            &parts,
            Action::ClaimTasks,
            args,
            |caller, args| async move {
                let tasks = task_claims::claim_tasks(&self.state, &caller, epoch, args).await?;
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
        let epoch = auth_epoch(&self.state, &parts);
        run(&parts, Action::ReadInbox, args, |caller, args| async move {
            messages::read_inbox(&self.state, &caller, epoch, args).await
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
        description = "Post one run of a project's test suite to the test history: `project`, \
        `tree` (a git tree or commit hash, or a content hash of the code), `outcomes` \
        ([{nodeid, outcome: passed|failed|skipped|error}]). Answers the run, counted."
    )]
    async fn history_post(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<NewTestRun>>,
    ) -> ToolResult {
        run(
            &parts,
            Action::PostTestRuns,
            args,
            |caller, run| async move { Ok(self.state.store.record_test_run(&caller, run).await?) },
        )
        .await
    }

    #[tool(
        description = "Read the test history of a project (the one posted to last by \
        default): `view` `runs` (pass rate per kept run, oldest first), `flaky` (tests that \
        passed and failed on one tree; `tree` narrows it) or `regressions` (failing now, passed \
        the last time before)."
    )]
    async fn history_get(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<HistoryArgs>>,
    ) -> ToolResult {
        run(
            &parts,
            Action::ReadTestHistory,
            args,
            |caller, args| async move {
                let state = &self.state;
                Ok(match args.view {
                    HistoryView::Runs => serde_json::to_value(
                        test_history::history_of(state, &caller, args.project).await?,
                    ),
                    HistoryView::Flaky => serde_json::to_value(
                        test_history::flaky_of(state, &caller, args.project, args.tree).await?,
                    ),
                    HistoryView::Regressions => serde_json::to_value(
                        test_history::regressions_of(state, &caller, args.project).await?,
                    ),
                }
                .unwrap_or_default())
            },
        )
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

/// The revocation epoch at which `authenticate` let the request in (so a long poll ends when
/// the token is revoked meanwhile).
fn auth_epoch(state: &AppState, parts: &Parts) -> crate::http::AuthEpoch {
    parts
        .extensions
        .get::<crate::http::AuthEpoch>()
        .copied()
        .unwrap_or_else(|| state.auth.epoch())
}
