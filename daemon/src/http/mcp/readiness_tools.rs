//! `task_why_not_ready`: `GET …/tasks/{id}/why-not-ready` as a tool, so an agent waiting for
//! work learns what holds a task back (blockers, a question, another task's file scope).

use super::args::{Args, TaskId};
use super::tools::{run, Huddle, ToolResult};
use crate::http::authz::Action;
use crate::http::task_readiness;
use axum::http::request::Parts;
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

#[tool_router(router = readiness_router, vis = "pub(super)")]
impl Huddle {
    #[tool(
        description = "Why a task is not handed to a claim now: `reasons` lists each thing \
        holding it back (`status`: not pending; `blockedBy`: blockers not completed; `gate`: \
        a question for a person; `scope`: its metadata `scope` overlaps a task in progress, \
        named with its holder and the two globs). Empty when a claim could take it.",
        annotations(
            title = "Why not ready",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn task_why_not_ready(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<TaskId>>,
    ) -> ToolResult {
        run(&parts, Action::ReadTasks, args, |caller, args| async move {
            task_readiness::reasons(&self.state, caller.team_id, &args.id).await
        })
        .await
    }
}
