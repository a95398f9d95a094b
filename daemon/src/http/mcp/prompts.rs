//! MCP prompts: the tester's and the coordinator's loops (claim → heartbeat → report →
//! complete), which Claude Code offers as slash commands (`/mcp__huddle__tester_loop`). Static
//! text with a few arguments; the same for every caller (a prompt only describes tools, which
//! are still checked by role when called).

use rmcp::model::{
    GetPromptRequestParams, GetPromptResult, ListPromptsResult, Prompt, PromptArgument,
    PromptMessage, Role,
};
use rmcp::ErrorData;
use serde_json::Value;

/// Every prompt, with its arguments.
pub fn list() -> ListPromptsResult {
    let tester = Prompt::new(
        "tester_loop",
        Some("Work as a tester: claim a test task, keep it, run it, report, complete; repeat."),
        Some(vec![
            PromptArgument::new("prefix")
                .with_description("Task id prefix to claim (default: your role's, e.g. TEST)"),
            PromptArgument::new("project")
                .with_description("Only tasks of this project (metadata.project)"),
        ]),
    );
    let coordinator = Prompt::new(
        "coordinator_loop",
        Some("Coordinate the team: plan tasks with dependencies, follow reports, unblock, close."),
        Some(vec![PromptArgument::new("goal")
            .with_description("What the team should achieve")
            .with_required(false)]),
    );
    ListPromptsResult::with_all_items(vec![tester, coordinator])
}

/// The prompt `request` names, filled with its arguments.
pub fn get(request: GetPromptRequestParams) -> Result<GetPromptResult, ErrorData> {
    let arg = |name: &str| {
        request
            .arguments
            .as_ref()
            .and_then(|a| a.get(name))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let text = match request.name.as_str() {
        "tester_loop" => tester(arg("prefix"), arg("project")),
        "coordinator_loop" => coordinator(arg("goal")),
        other => {
            return Err(ErrorData::invalid_params(
                format!("no prompt {other}; there are tester_loop and coordinator_loop"),
                None,
            ))
        }
    };
    let message = PromptMessage::new_text(Role::User, text);
    Ok(GetPromptResult::new(vec![message]))
}

fn tester(prefix: Option<String>, project: Option<String>) -> String {
    let claim = match (&prefix, &project) {
        (Some(p), Some(j)) => {
            format!("task_claim {{prefixes: [\"{p}\"], project: \"{j}\", waitMs: 20000}}")
        }
        (Some(p), None) => format!("task_claim {{prefixes: [\"{p}\"], waitMs: 20000}}"),
        (None, Some(j)) => format!("task_claim {{project: \"{j}\", waitMs: 20000}}"),
        (None, None) => "task_claim {waitMs: 20000}".to_string(),
    };
    format!(
        "You are a tester in a huddle team. Loop until no task comes:\n\
         1. Claim: call {claim}. An empty `tasks` means nothing is ready: call it again a few \
         times, then stop and say so. Only the task you claimed is yours; never work on a task \
         you did not claim.\n\
         2. Keep it: the claim is a lease (`lease.expiresAt`). Any huddle tool call renews it; \
         during a long step (a whole test suite) call task_heartbeat {{id}} before the lease \
         runs out, or the task goes back to the queue and your task_complete is refused.\n\
         3. Work: read the task (task_get {{id}}), run the tests, fix what fails (at most 10 \
         rounds; aim for a pass rate of at least 95 %).\n\
         4. Report: record the run with history_post {{project, tree, outcomes}} and tell the \
         coordinator with msg_post {{to: \"coordinator\", type: \"test_result\", summary, \
         data: {{taskId, passRate, iterations, total, passed, failed}}}} (skills using \
         team_msg: team_msg {{operation: \"log\", session_id, from, to: \"coordinator\", type: \
         \"test_result\", summary, data}}). Use type fix_required for a problem you cannot fix \
         and error when the tests cannot run.\n\
         5. Finish: task_complete {{id, result}} when the target is met; task_fail {{id, \
         reason}} when it is not (the task is retried while it has attempts); task_release \
         {{id, note}} to hand it back without using an attempt.\n\
         6. Read your inbox (inbox_read, then inbox_ack {{seq}}) for the coordinator's \
         instructions, then go back to 1."
    )
}

fn coordinator(goal: Option<String>) -> String {
    let goal = goal.map(|g| format!("The goal: {g}\n")).unwrap_or_default();
    format!(
        "You coordinate a huddle team.\n{goal}\
         1. Plan: create the tasks with task_create {{tasks: [{{id: \"TEST-001\", subject, \
         description, owner?, blockedBy: [...]}}]}}; a task becomes ready when every task in \
         its blockedBy is completed. Testers claim TEST-* tasks, executors IMPL-* ones.\n\
         2. Follow: wait for reports with inbox_read {{waitMs: 20000}} and acknowledge them with \
         inbox_ack {{seq}} (or team_msg {{operation: \"read_mailbox\", session_id}}); check the \
         board with task_list (compact: `blockedBy` lists only blockers not yet completed) and \
         agent_list (who is alive).\n\
         3. Unblock: answer fix_required and error reports — create a fix task for an \
         executor, edit a task (task_update), or answer a held question (task_answer). A task \
         that failed for good stays failed and its dependents stay blocked until you act.\n\
         4. Record decisions others need in the shared memory (memory_patch) and tell the team \
         with msg_post {{to: \"*\"}}.\n\
         5. Close: when every task is completed (task_list {{status: \"pending\"}} and \
         {{status: \"in_progress\"}} are empty), summarise the results from the test_result \
         messages (msg_list {{type: \"test_result\", newest: true}}) and the test history \
         (history_get)."
    )
}
