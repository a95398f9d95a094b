//! The team and its bus as tools: who is in the team, who the caller is, posting and listing
//! messages, and an agent's inbox (read with a long poll, acknowledged by cursor).

use super::args::*;
use super::departed;
use super::tools::{auth_epoch, run, Huddle, ToolResult};
use crate::http::authz::Action;
use crate::http::{me, messages, teams};
use axum::http::request::Parts;
use huddle_wire::{BatchMessage, InboxAck};
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use serde_json::json;

#[tool_router(router = team_router, vis = "pub(super)")]
impl Huddle {
    #[tool(
        description = "Your teammates: each agent's name, role and when it was last seen \
        (any request it made; an agent waiting for work counts as seen).",
        annotations(
            title = "List teammates",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn agent_list(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<NoArgs>>,
    ) -> ToolResult {
        run(
            &parts,
            Action::ListAgents,
            args,
            |caller, _: NoArgs| async move { teams::agents_of(&self.state, caller.team_id).await },
        )
        .await
    }

    #[tool(
        description = "Who you are here: your team, name and role, the task prefixes you \
        claim by default, the longest wait and the lease limits.",
        annotations(title = "Who am I", read_only_hint = true, open_world_hint = false)
    )]
    async fn whoami(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<NoArgs>>,
    ) -> ToolResult {
        run(
            &parts,
            Action::ListAgents,
            args,
            |caller, _: NoArgs| async move {
                let t = &self.state.settings.tasks;
                let me = me::who_am_i(&self.state, &caller).await?;
                Ok(json!({
                    "team": caller.team,
                    "agent": me.name,
                    "role": me.role,
                    "questions": me.questions,
                    "claimPrefixes": caller.role.default_prefixes(),
                    "maxWaitMs": t.mcp_max_wait_ms,
                    "defaultLeaseMs": super::lease_renewal::mcp_lease_ms(&self.state),
                    "minLeaseMs": t.min_lease_ms,
                    "maxLeaseMs": t.max_lease_ms,
                }))
            },
        )
        .await
    }

    #[tool(
        description = "Post a message to an agent, a role, or `*` (everyone). `type` is \
        e.g. test_result, impl_progress, fix_required, error. A retry with the same \
        `idempotencyKey` answers with the stored message.",
        annotations(
            title = "Post a message",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
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
                let posted = messages::post_message(
                    &self.state,
                    &caller,
                    message,
                    "idempotencyKey",
                    key.as_deref(),
                )
                .await?;
                Ok(json!({ "message": posted.message, "replayed": posted.replayed }))
            },
        )
        .await
    }

    #[tool(
        description = "List the team's messages in `seq` order, filtered by sender, \
        recipient or type; `next` is the `after` of the following page. `newest: true` gives \
        the last `limit` messages instead (still oldest first).",
        annotations(
            title = "List messages",
            read_only_hint = true,
            open_world_hint = false
        )
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
        one (the wait ends early if you cancel the call). Reading does not move the cursor: \
        inbox_ack does, so nothing is lost if a read goes unanswered.",
        annotations(
            title = "Read your inbox",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn inbox_read(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<messages::InboxQuery>>,
    ) -> ToolResult {
        let epoch = auth_epoch(&self.state, &parts);
        let gone = departed(&parts);
        run(&parts, Action::ReadInbox, args, |caller, args| async move {
            let max_wait = self.state.settings.tasks.mcp_max_wait_ms;
            messages::read_inbox(&self.state, &caller, epoch, args, max_wait, &gone).await
        })
        .await
    }

    #[tool(
        description = "Mark your inbox handled up to and including `seq`.",
        annotations(
            title = "Acknowledge messages",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn inbox_ack(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<InboxAck>>,
    ) -> ToolResult {
        run(&parts, Action::AckInbox, args, |caller, args| async move {
            messages::ack_inbox(&self.state, &caller, args).await
        })
        .await
    }
}
