//! `huddle hook`: the Claude Code hook bridge. Claude Code runs it on its hook events with the
//! event's JSON on stdin (`hook_event_name`, `session_id`, `tool_name`, `tool_input`,
//! `tool_response`); it mirrors Claude Code's built-in team tools into the huddle team:
//!
//! - `PreToolUse` `TaskUpdate` to `in_progress`: an atomic huddle claim of that task; when
//!   another agent holds it the call is denied with the holder's name, which the model reads;
//!   to `completed`: completes it in huddle (as its holder).
//! - `PostToolUse` `TaskCreate`: creates the task in huddle; `SendMessage`: posts it to the bus;
//!   any other tool: renews the leases of the tasks this session holds.
//! - `SessionEnd`: releases what the session held.
//!
//! Claude Code task `N` is huddle task `<PREFIX>-00N` (`--prefix`, TEST by default) whose
//! metadata says `claudeTaskId` and `project: "claude-task:N"`, the project that makes the claim
//! exact. It runs on every tool call, so each event is one HTTP round trip where it can be, and
//! a daemon it cannot reach never blocks the session: only a refusal denies.

use crate::hook_state::Held;
use huddle_sdk::wire::{ClaimRequest, NewTask, PostMessage, Task, TaskStatus};
use huddle_sdk::{Client, Error};
use serde_json::{json, Value};
use std::io::Read;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct HookArgs {
    /// The hook event, for reading the settings (`PreToolUse`, `PostToolUse`, `SessionEnd`);
    /// the event JSON's `hook_event_name` is what counts.
    event: Option<String>,
    /// The id prefix of the huddle tasks that mirror Claude Code's (Claude Code task 3 is
    /// `TEST-003`).
    #[arg(long, env = "HUDDLE_HOOK_PREFIX", default_value = "TEST")]
    prefix: String,
    /// The lease of a claim and of each renewal, in milliseconds: an LLM's step, minutes long.
    #[arg(long, env = "HUDDLE_HOOK_LEASE_MS", default_value_t = 600_000)]
    lease_ms: u64,
}

/// What a hook answers Claude Code: nothing (go on), or a denial of the tool call.
enum Verdict {
    Allow,
    Deny(String),
}

/// Reads the event, acts on it and answers Claude Code. Exit 0 always: a denial is JSON on
/// stdout, a problem (the daemon is down) a line on stderr that Claude Code logs.
pub async fn run(client: &Client, args: HookArgs) -> ExitCode {
    let mut input = String::new();
    let event: Value = match std::io::stdin()
        .read_to_string(&mut input)
        .map_err(|e| e.to_string())
        .and_then(|_| serde_json::from_str(&input).map_err(|e| e.to_string()))
    {
        Ok(event) => event,
        Err(e) => {
            eprintln!("huddle hook: unreadable hook input: {e}");
            return ExitCode::SUCCESS;
        }
    };
    let bridge = Bridge {
        client,
        args: &args,
        held: Held::of_session(event["session_id"].as_str().unwrap_or("unknown")),
    };
    match bridge.handle(&event).await {
        Ok(Verdict::Allow) => {}
        Ok(Verdict::Deny(reason)) => {
            let answer = json!({"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }});
            println!("{answer}");
        }
        Err(e) => eprintln!("huddle hook: {e}"),
    }
    ExitCode::SUCCESS
}

struct Bridge<'a> {
    client: &'a Client,
    args: &'a HookArgs,
    held: Held,
}

impl Bridge<'_> {
    async fn handle(&self, event: &Value) -> Result<Verdict, Error> {
        let tool = event["tool_name"].as_str().unwrap_or_default();
        let input = &event["tool_input"];
        match (event["hook_event_name"].as_str().unwrap_or_default(), tool) {
            ("PreToolUse", "TaskUpdate") => self.task_update(input).await,
            ("PostToolUse", "TaskCreate") => self.task_create(input, &event["tool_response"]).await,
            ("PostToolUse", "SendMessage") => {
                self.renew().await?;
                self.send_message(input).await
            }
            ("PostToolUse", _) => self.renew().await,
            ("SessionEnd", _) => self.release_all().await,
            _ => Ok(Verdict::Allow),
        }
    }

    fn huddle_id(&self, claude_id: &str) -> String {
        huddle_id(&self.args.prefix, claude_id)
    }

    fn lease(&self) -> Duration {
        Duration::from_millis(self.args.lease_ms)
    }

    async fn task_create(&self, input: &Value, response: &Value) -> Result<Verdict, Error> {
        let Some(claude_id) = response["task"]["id"].as_str() else {
            return Ok(Verdict::Allow);
        };
        let task = NewTask {
            id: Some(self.huddle_id(claude_id)),
            subject: input["subject"].as_str().unwrap_or(claude_id).to_string(),
            description: input["description"].as_str().map(str::to_string),
            active_form: input["activeForm"].as_str().map(str::to_string),
            metadata: Some(json!({
                "claudeTaskId": claude_id,
                "project": format!("claude-task:{claude_id}"),
            })),
            ..NewTask::default()
        };
        self.client.create_task(&task).await?;
        Ok(Verdict::Allow)
    }

    async fn task_update(&self, input: &Value) -> Result<Verdict, Error> {
        let Some(claude_id) = input["taskId"].as_str() else {
            return Ok(Verdict::Allow);
        };
        let id = self.huddle_id(claude_id);
        match input["status"].as_str() {
            Some("in_progress") => self.claim(claude_id, &id).await,
            Some("completed") => self.complete(claude_id, &id).await,
            // Put back: the agent gives the task up, so huddle's claim goes too.
            Some("pending") if self.held.all().contains_key(claude_id) => {
                self.client.release(&id).await?;
                self.held.remove(claude_id);
                Ok(Verdict::Allow)
            }
            _ => Ok(Verdict::Allow),
        }
    }

    /// The claim is exact: the task's own project, strictly, within its prefix.
    async fn claim(&self, claude_id: &str, id: &str) -> Result<Verdict, Error> {
        let request = ClaimRequest {
            prefixes: Some(vec![self.args.prefix.clone()]),
            project: Some(format!("claude-task:{claude_id}")),
            strict_project: true,
            lease_ms: Some(self.args.lease_ms),
            ..ClaimRequest::default()
        };
        if let Some(task) = self.client.claim(&request).await? {
            self.held.add(claude_id, &task.id);
            return Ok(Verdict::Allow);
        }
        // Nothing ready: say why, when huddle has a reason the model should read.
        let task = match self.client.get_task(id).await {
            Ok(task) => task,
            Err(Error::Api(e)) if e.status == 404 => return Ok(Verdict::Allow),
            Err(e) => return Err(e),
        };
        Ok(self.why_not_claimable(claude_id, &task).await)
    }

    async fn why_not_claimable(&self, claude_id: &str, task: &Task) -> Verdict {
        let id = &task.id;
        match (task.status, task.claimed_by.as_deref()) {
            (TaskStatus::InProgress, Some(holder)) => {
                // Asked only here: a held task that might be this agent's own.
                let me = self.client.me().await.ok().map(|m| m.name);
                if me.as_deref() == Some(holder) {
                    self.held.add(claude_id, id);
                    return Verdict::Allow;
                }
                Verdict::Deny(format!(
                    "Task {claude_id} ({id}) is already in progress: {holder} holds it in huddle. \
                     Pick another task."
                ))
            }
            (TaskStatus::Completed, _) => Verdict::Deny(format!(
                "Task {claude_id} ({id}) is already completed in huddle."
            )),
            (TaskStatus::Pending, _) => {
                // The daemon's own reasons (blockers, a question, another task's overlapping
                // file scope, named with its holder); a daemon without them: the blockers.
                match self.client.why_not_ready(id).await {
                    Ok(why) if !why.reasons.is_empty() => {
                        let reasons: Vec<&str> =
                            why.reasons.iter().map(|r| r.message.as_str()).collect();
                        Verdict::Deny(format!(
                            "Task {claude_id} ({id}) cannot be claimed in huddle now: {}.",
                            reasons.join("; ")
                        ))
                    }
                    Err(_) if !task.blocked_by.is_empty() => Verdict::Deny(format!(
                        "Task {claude_id} ({id}) is blocked in huddle by {}.",
                        task.blocked_by.join(", ")
                    )),
                    _ => Verdict::Allow,
                }
            }
            _ => Verdict::Allow,
        }
    }

    async fn complete(&self, claude_id: &str, id: &str) -> Result<Verdict, Error> {
        match self.client.complete(id, None).await {
            Ok(_) => {
                self.held.remove(claude_id);
                Ok(Verdict::Allow)
            }
            Err(Error::Api(e)) if e.status == 404 => Ok(Verdict::Allow),
            Err(Error::Api(e)) => Ok(Verdict::Deny(format!(
                "huddle refused to complete task {claude_id} ({id}): {}: {}",
                e.code, e.message
            ))),
            Err(e) => Err(e),
        }
    }

    async fn send_message(&self, input: &Value) -> Result<Verdict, Error> {
        let text = |key: &str| input[key].as_str().map(str::to_string);
        let body = text("message")
            .or_else(|| text("content"))
            .unwrap_or_default();
        let message = PostMessage {
            to: text("to")
                .or_else(|| text("recipient"))
                .unwrap_or("*".into()),
            kind: text("type").unwrap_or("message".into()),
            summary: text("summary").unwrap_or_else(|| body.chars().take(200).collect()),
            data: json!({"message": body, "via": "claude-code"}),
        };
        self.client.post_message(&message).await?;
        Ok(Verdict::Allow)
    }

    /// One heartbeat per held task (usually one, often none: then no round trip at all).
    async fn renew(&self) -> Result<Verdict, Error> {
        for (claude_id, id) in self.held.all() {
            match self.client.heartbeat(&id, Some(self.lease())).await {
                Ok(_) => {}
                // Lost (lapsed, taken, completed elsewhere): no longer ours to renew.
                Err(Error::Api(_)) => self.held.remove(&claude_id),
                Err(e) => return Err(e),
            }
        }
        Ok(Verdict::Allow)
    }

    async fn release_all(&self) -> Result<Verdict, Error> {
        for (claude_id, id) in self.held.all() {
            match self.client.release(&id).await {
                Ok(_) | Err(Error::Api(_)) => self.held.remove(&claude_id),
                Err(e) => return Err(e),
            }
        }
        Ok(Verdict::Allow)
    }
}

/// Claude Code's task `N` as huddle's `<prefix>-00N`; an id that is not a number keeps its
/// text (huddle then refuses it as an id, and the bridge leaves that task alone).
fn huddle_id(prefix: &str, claude_id: &str) -> String {
    match claude_id.parse::<u64>() {
        Ok(n) => format!("{prefix}-{n:03}"),
        Err(_) => format!("{prefix}-{claude_id}"),
    }
}

#[cfg(test)]
mod tests {
    use super::huddle_id;

    #[test]
    fn claude_code_task_ids_map_to_numbered_huddle_ids() {
        assert_eq!(huddle_id("TEST", "1"), "TEST-001");
        assert_eq!(huddle_id("CC", "1234"), "CC-1234");
        assert_eq!(huddle_id("TEST", "abc"), "TEST-abc");
    }
}
