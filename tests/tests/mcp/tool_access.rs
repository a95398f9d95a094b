//! `tools/list` is shaped to the reader: each role sees exactly the tools it may call. Every
//! tool is called with every role (with no arguments: the role is checked before them), and a
//! tool is listed exactly when the call is not refused with `forbidden`.

use super::history::call;
use huddle_tests::TestDaemon;
use serde_json::{json, Value};

const TOOLS: [&str; 31] = [
    "task_create",
    "task_list",
    "task_get",
    "task_why_not_ready",
    "task_update",
    "task_claim",
    "task_heartbeat",
    "task_release",
    "task_complete",
    "task_fail",
    "task_gate",
    "task_answer",
    "task_ask",
    "task_decision",
    "agent_list",
    "whoami",
    "msg_post",
    "msg_list",
    "msg_search",
    "inbox_read",
    "inbox_ack",
    "memory_get",
    "memory_patch",
    "history_post",
    "history_get",
    "team_msg",
    "spend_reserve",
    "spend_settle",
    "spend_report",
    "budget_get",
    "budget_set",
];

async fn listed(d: &TestDaemon, token: &str) -> Vec<String> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    let reply: Value = reqwest::Client::new()
        .post(format!("{}/mcp", d.url))
        .header("accept", "application/json, text/event-stream")
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .expect("request")
        .json()
        .await
        .expect("a JSON-RPC answer");
    let mut names: Vec<String> = reply["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{reply}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn each_role_lists_exactly_the_tools_it_may_call() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let mut sizes = Vec::new();
    for role in ["lead", "coordinator", "tester", "executor", "observer"] {
        let token = if role == "coordinator" {
            c.token.clone()
        } else {
            d.agent("qa", &format!("{role}-1"), role).await.token
        };
        let shown = listed(&d, &token).await;
        let mut allowed = Vec::new();
        for tool in TOOLS {
            let result = call(&d, &token, tool, json!({})).await;
            let code = &result["structuredContent"]["error"]["code"];
            if code != "forbidden" {
                allowed.push(tool.to_string());
            }
        }
        allowed.sort();
        assert_eq!(shown, allowed, "{role}: listed vs callable");
        sizes.push((role, shown.len()));
    }
    // Every tool is someone's, and an observer reads only.
    let observer = sizes.iter().find(|(r, _)| *r == "observer").unwrap().1;
    let lead = sizes.iter().find(|(r, _)| *r == "lead").unwrap().1;
    assert!(observer < lead, "{sizes:?}");
}
