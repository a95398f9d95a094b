//! `msg_search`: the message search of `GET …/messages/search` as a tool, so an agent finds an
//! earlier result or fix by its words instead of paging the whole log.

use super::args::Args;
use super::tools::{run, Huddle};
use crate::http::authz::Action;
use crate::http::message_search::{search_messages, SearchQuery};
use axum::http::request::Parts;
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router, ErrorData};

#[tool_router(router = search_router, vis = "pub(super)")]
impl Huddle {
    #[tool(
        description = "Search the team's messages, newest first: `q` is words each message \
        must contain (as word starts, any order: \"TEST-00 average\"), with optional filters by \
        `type`, `from`, `to`, `task` (the task it is about) and time (`since`, `until`, RFC \
        3339). `total` counts every match; `next` is the `before` of the following page.",
        annotations(
            title = "Search messages",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn msg_search(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<SearchQuery>>,
    ) -> Result<CallToolResult, ErrorData> {
        run(
            &parts,
            Action::ReadMessages,
            args,
            |caller, args| async move { search_messages(&self.state, &caller, args).await },
        )
        .await
    }
}
