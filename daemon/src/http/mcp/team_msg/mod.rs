//! `team_msg`: the team message bus tool of Claude-Code-Workflow (`ccw/src/tools/team-msg.ts`)
//! with its contract (operations, parameters, defaults, answers), over huddle's message bus and
//! shared memory, so team skills written for it run unchanged. docs/mcp.md says what each
//! operation does here; `view.rs` how messages, ids and state look.
//!
//! The session (`session_id`, or the older `team`/`team_session_id`) names the huddle team and
//! must be the token's. Each operation checks the role its HTTP counterpart needs and calls that
//! counterpart's function (a `log` is a `POST /messages`, with its rules and limits).

mod operations;
mod view;

use super::tools::{Huddle, ToolResult};
use super::{answer, caller, departed};
use crate::http::error::{ApiError, ApiResult};
use crate::http::extract::parse_value;
use axum::http::request::Parts;
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

/// What the operation does (upstream's names).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// Append a message (`from` required; `to` defaults to `coordinator`, `type` to `message`,
    /// `summary` is generated when absent). A `state_update` also merges its `data` into the
    /// shared memory at `/role_state/<from>`, in the same transaction.
    Log,
    /// One message by `id` (`MSG-003`).
    Read,
    /// The last `last` messages (20 by default, 1–100), filtered by `from`, `to`, `type`.
    List,
    /// Each team member's activity: last message, count.
    Status,
    /// Hide one message by `id` from team_msg (coordinators; the history keeps it).
    Delete,
    /// Hide every message so far from team_msg (coordinators; the history keeps them).
    Clear,
    /// `log` to everyone (`to: all`).
    Broadcast,
    /// The state of `role` (all roles' without it), as `state_update`s left it.
    GetState,
    /// Your undelivered messages (up to `last`), then marked delivered.
    ReadMailbox,
    /// How many undelivered messages you have.
    MailboxStatus,
}

/// `team_msg`'s parameters, as upstream names them. Unknown ones are ignored, as upstream does.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TeamMsgArgs {
    /// What to do: log | read | list | status | delete | clear | broadcast | get_state |
    /// read_mailbox | mailbox_status.
    pub operation: Operation,
    /// The session: the huddle team's name (your token's team).
    pub session_id: Option<String>,
    /// [deprecated] Use session_id.
    pub team_session_id: Option<String>,
    /// [deprecated] Use session_id.
    pub team: Option<String>,
    /// [log/broadcast] Sender: your agent name or your role. [list] Filter by sender agent.
    pub from: Option<String>,
    /// [log] Recipient: an agent, a role or `all` (default `coordinator`). [list] Filter.
    pub to: Option<String>,
    /// [log/broadcast] Message type (default `message`): state_update, test_result,
    /// impl_progress, fix_required, error, shutdown… [list] Filter.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// [log/broadcast] One-line summary (generated from type, from and to when absent).
    pub summary: Option<String>,
    /// [log/broadcast] Structured payload; `data.ref` for file paths. A `state_update`'s data
    /// is merged into `/role_state/<from>` of the shared memory.
    pub data: Option<Map<String, Value>>,
    /// [read/delete] Message id, e.g. MSG-003.
    pub id: Option<String>,
    /// [list/read_mailbox] How many, the newest (default 20).
    #[schemars(range(min = 1, max = 100))]
    pub last: Option<i64>,
    /// [get_state] Role to read (all roles without it). [read_mailbox/mailbox_status] Whose
    /// mailbox: yours (your agent name or role).
    pub role: Option<String>,
    /// [read_mailbox] How the messages reach you; echoed back (default `pull`).
    pub delivery_method: Option<String>,
    /// [deprecated] Use data.ref.
    #[serde(rename = "ref")]
    pub reference: Option<String>,
}

#[tool_router(router = team_msg_router, vis = "pub(in crate::http::mcp)")]
impl Huddle {
    #[tool(
        description = "Team message bus (Claude-Code-Workflow's team_msg): operation log | read \
        | list | status | delete | clear | broadcast | get_state | read_mailbox | \
        mailbox_status, with session_id (your team). log: from (your name or role), to \
        (default coordinator), type (default message), summary, data; a state_update's data \
        is merged into the shared memory at /role_state/<from>. read/delete: id (MSG-003). \
        list: last (default 20), from, to, type. get_state: role. Messages stay in the \
        team's history: delete and clear (coordinators) hide them from team_msg only.",
        annotations(
            title = "Team message bus",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn team_msg(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<super::args::Args<TeamMsgArgs>>,
    ) -> ToolResult {
        let caller = caller(&parts)?;
        let result = async {
            let args: TeamMsgArgs = parse_value(args.into_value())?;
            check_session(&caller, &args)?;
            let ctx = operations::Ctx {
                state: &self.state,
                caller: &caller,
                epoch: super::tools::auth_epoch(&self.state, &parts),
                departed: departed(&parts),
            };
            ctx.run(args).await
        }
        .await;
        answer::<Value>(result)
    }
}

/// The session must be given and be the token's team; another team's name is answered as the
/// API answers it (`not_found`: a token cannot tell whether another team exists).
fn check_session(caller: &crate::store::Caller, args: &TeamMsgArgs) -> ApiResult<()> {
    let session = [&args.session_id, &args.team_session_id, &args.team]
        .into_iter()
        .find_map(|s| s.as_deref().filter(|s| !s.is_empty()));
    match session {
        None => Err(ApiError::bad_request(
            "session_id",
            "Missing required parameter: session_id (or legacy \"team_session_id\" / \"team\"): \
             your team's name",
        )),
        Some(team) if team != caller.team => {
            Err(ApiError::not_found(format!("team {team} not found")))
        }
        Some(_) => Ok(()),
    }
}
