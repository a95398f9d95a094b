//! What the team keeps as tools: test runs (recorded and read back as history) and the shared
//! memory document (read whole or at a pointer, patched).

use super::args::*;
use super::tools::{run, Huddle, ToolResult};
use crate::http::authz::Action;
use crate::http::{memory, test_history};
use axum::http::request::Parts;
use huddle_wire::NewTestRun;
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use serde_json::json;

#[tool_router(router = memory_router, vis = "pub(super)")]
impl Huddle {
    #[tool(
        description = "Post one run of a project's test suite to the test history: `project`, \
        `tree` (a git tree or commit hash, or a content hash of the code), `outcomes` \
        ([{nodeid, outcome: passed|failed|skipped|error}]). Answers the run, counted.",
        annotations(
            title = "Record a test run",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
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
            |caller, run| async move { test_history::record_run(&self.state, &caller, run).await },
        )
        .await
    }

    #[tool(
        description = "Read the test history of a project (the one posted to last by \
        default): `view` `runs` (pass rate per kept run, oldest first), `flaky` (tests that \
        passed and failed on one tree; `tree` narrows it) or `regressions` (failing now, passed \
        the last time before); `tier` (`unit`, `pbt`, `integration`, `e2e`) reads only that \
        test tier's runs; without it, only the whole-suite runs.",
        annotations(
            title = "Read the test history",
            read_only_hint = true,
            open_world_hint = false
        )
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
                let tier = args.tier.map(|t| t.as_str().to_string());
                Ok(match args.view {
                    HistoryView::Runs => serde_json::to_value(
                        test_history::history_of(state, &caller, args.project, tier).await?,
                    ),
                    HistoryView::Flaky => serde_json::to_value(
                        test_history::flaky_of(state, &caller, args.project, args.tree, tier)
                            .await?,
                    ),
                    HistoryView::Regressions => serde_json::to_value(
                        test_history::regressions_of(state, &caller, args.project, tier).await?,
                    ),
                }
                .unwrap_or_default())
            },
        )
        .await
    }

    #[tool(
        description = "Read the team's shared memory: the whole document with its version, \
        or {\"value\": ...} at a JSON Pointer.",
        annotations(
            title = "Read shared memory",
            read_only_hint = true,
            open_world_hint = false
        )
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
                let state = &self.state;
                match args.pointer.as_deref() {
                    None | Some("") | Some("/") => {
                        let memory = memory::read_memory(state, &caller).await?;
                        Ok(serde_json::to_value(memory).unwrap_or_default())
                    }
                    Some(p) => {
                        let value = memory::read_memory_value(state, &caller, p).await?;
                        Ok(json!({ "value": value }))
                    }
                }
            },
        )
        .await
    }

    #[tool(
        description = "Change the shared memory with a merge patch (objects merge, null \
        deletes), or with `jsonPatch: true` an RFC 6902 list of operations applied all or none.",
        annotations(
            title = "Change shared memory",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
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
