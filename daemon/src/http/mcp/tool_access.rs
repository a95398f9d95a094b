//! Which action of the permission matrix each tool is, so `tools/list` shows a token only the
//! tools its role may call (an observer's session no longer carries the schemas of tools it
//! would be refused). The tools check the same action when called (`tools::run`); the test
//! `tests/tests/mcp/tool_access.rs` calls every tool with every role and holds the two alike.

use crate::http::authz::{self, Action};
use crate::store::Caller;

/// The action `tool` needs; `None` for a name that is no tool.
pub fn action_of(tool: &str) -> Option<Action> {
    Some(match tool {
        "task_create" => Action::CreateTasks,
        "task_list" | "task_get" | "task_decision" | "task_why_not_ready" => Action::ReadTasks,
        "task_update" | "task_gate" | "task_answer" => Action::EditTasks,
        "task_claim" => Action::ClaimTasks,
        "task_heartbeat" | "task_release" | "task_complete" | "task_fail" | "task_ask" => {
            Action::ActOnClaims
        }
        "agent_list" | "whoami" => Action::ListAgents,
        "msg_post" => Action::PostMessages,
        // Each operation checks its own action; reading is the least of them.
        "msg_list" | "msg_search" | "team_msg" => Action::ReadMessages,
        "inbox_read" => Action::ReadInbox,
        "inbox_ack" => Action::AckInbox,
        "memory_get" => Action::ReadMemory,
        "memory_patch" => Action::PatchMemory,
        "history_post" => Action::PostTestRuns,
        "history_get" => Action::ReadTestHistory,
        "spend_reserve" | "spend_settle" => Action::RecordSpend,
        "spend_report" | "budget_get" => Action::ReadSpend,
        "budget_set" => Action::ManageBudget,
        _ => return None,
    })
}

/// Whether `caller` may call `tool` (a tool with no entry is shown: the test above fails on it).
pub fn may_call(caller: &Caller, tool: &str) -> bool {
    action_of(tool).is_none_or(|action| authz::permit(caller, action).is_ok())
}
