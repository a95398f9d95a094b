//! The Python SDK plays a coordinator, an executor and an observer (`client.py`); its report is
//! checked here, and what it did is read back through the HTTP API.

use huddle_tests::{python, TestDaemon};
use serde_json::{json, Value};
use std::path::Path;

#[tokio::test]
async fn an_mcp_client_creates_claims_completes_posts_and_is_refused_by_role_and_bad_input() {
    python::require_modules(&["mcp", "httpx2"]);
    let d = TestDaemon::start().await;
    let coordinator = d.team("qa").await;
    let executor = d.agent("qa", "ex1", "executor").await;
    let observer = d.agent("qa", "watcher", "observer").await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let url = format!("{}/mcp", d.url);
    let output = python::run(
        &script,
        &[
            ("HUDDLE_MCP_URL", &url),
            ("HUDDLE_COORDINATOR", &coordinator.token),
            ("HUDDLE_EXECUTOR", &executor.token),
            ("HUDDLE_OBSERVER", &observer.token),
        ],
    )
    .await;
    let report: Value = serde_json::from_slice(&output.stdout).expect("the client's JSON report");

    assert_eq!(report["server"], "huddled");
    let tools: Vec<&str> = report["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for tool in [
        "task_create",
        "task_list",
        "task_get",
        "task_update",
        "task_claim",
        "task_complete",
        "task_fail",
        "msg_post",
        "msg_list",
        "inbox_read",
        "inbox_ack",
        "memory_get",
        "memory_patch",
    ] {
        assert!(tools.contains(&tool), "{tool} is not listed: {tools:?}");
    }
    // The input schema is the wire type's: camelCase fields, unknown fields refused.
    let new_task = &report["create_schema"]["$defs"]["NewTask"];
    assert_eq!(new_task["additionalProperties"], false, "{new_task}");
    assert!(
        new_task["properties"]["blockedBy"].is_object(),
        "{new_task}"
    );
    assert_eq!(new_task["required"], json!(["subject"]));

    // Dependencies, readiness, claim and completion, as the API sees them.
    assert_eq!(report["created"][1]["blockedBy"], json!(["IMPL-1"]));
    assert_eq!(report["created_one"][0]["id"], "DOC-001");
    assert_eq!(report["ready_before"], json!(["IMPL-1"]));
    assert_eq!(report["claimed"], json!(["IMPL-1"]));
    assert_eq!(report["ready_after"], json!(["IMPL-2"]));
    let done = coordinator.get(&coordinator.t("/tasks/IMPL-1")).await;
    let done = done.expect_status(200).body;
    assert_eq!(done["status"], "completed");
    assert_eq!(done["claimedBy"], "ex1");
    assert_eq!(done["result"], json!({"passed": 3}));
    assert_eq!(report["completed"], done);

    // The message: from the token's agent, in the recipient's inbox, listed, acknowledged.
    let posted = &report["posted"];
    assert_eq!(posted["from"], "ex1");
    assert_eq!(report["inbox"], json!([posted]));
    assert_eq!(report["listed"], json!([posted]));
    assert_eq!(report["acked"]["cursor"], posted["seq"]);
    assert_eq!(report["inbox_after_ack"], json!([]));
    let listed = coordinator.get(&coordinator.t("/messages")).await;
    assert_eq!(listed.expect_status(200).body["messages"], json!([posted]));

    let memory = coordinator.get(&coordinator.t("/memory")).await;
    assert_eq!(report["memory"], memory.expect_status(200).body);
    assert_eq!(report["memory_value"], json!({"value": "rust"}));

    // Refusals carry the API's codes and messages.
    assert_eq!(report["observer_create"]["code"], "forbidden");
    assert_eq!(
        report["observer_create"]["message"],
        "an observer may not create tasks"
    );
    assert_eq!(report["complete_unheld"]["code"], "not_holder");
    assert_eq!(report["missing_task"]["code"], "not_found");
    let typo = &report["typo"];
    assert_eq!(typo["code"], "invalid_field", "{typo}");
    assert_eq!(typo["details"]["field"], "tasks[0].blocked_by", "{typo}");
    assert!(
        typo["message"]
            .as_str()
            .is_some_and(|m| m.contains("blocked_by")),
        "{typo}"
    );
    let typo = &report["typo_patch"];
    assert_eq!(typo["code"], "invalid_field", "{typo}");
    assert_eq!(typo["details"]["field"], "patch.status", "{typo}");
    let tasks = coordinator.get(&coordinator.t("/tasks?prefix=IMPL")).await;
    assert_eq!(
        tasks.expect_status(200).body["tasks"]
            .as_array()
            .map(Vec::len),
        Some(2),
        "the observer's task was not created"
    );
}
