//! The Python SDK plays a coordinator, an executor and an observer (`client.py`); its report is
//! checked here, and what it did is read back through the HTTP API.

use huddle_tests::http::Api;
use huddle_tests::{python, TestDaemon};
use serde_json::{json, Value};
use std::path::Path;

/// Runs `client.py` against `d` as a coordinator, an executor and an observer of team `qa`;
/// its JSON report, and the coordinator's API.
async fn client_report(d: &TestDaemon) -> (Value, Api) {
    python::require_modules(&["mcp", "httpx2"]);
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
    let report = serde_json::from_slice(&output.stdout).expect("the client's JSON report");
    (report, coordinator)
}

#[tokio::test]
async fn an_mcp_client_creates_claims_completes_posts_and_is_refused_by_role_and_bad_input() {
    let d = TestDaemon::start().await;
    let (report, coordinator) = client_report(&d).await;

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
        Some(3),
        "the observer's task was not created"
    );

    // A missing argument names the field; MCP waits stay below the clients' 60 s timeout.
    let missing = &report["missing_field"];
    assert_eq!(
        (
            missing["code"].as_str(),
            missing["details"]["field"].as_str()
        ),
        (Some("invalid_field"), Some("id")),
        "{missing}"
    );
    let too_long = &report["mcp_wait_too_long"];
    assert_eq!(too_long["details"]["field"], "waitMs", "{too_long}");
    assert!(
        too_long["message"].as_str().unwrap().contains("25000"),
        "{too_long}"
    );
    assert_eq!(
        report["held"],
        json!(["IMPL-2"]),
        "the oldest ready IMPL task"
    );
    let retry = &report["fail_retry"];
    assert_eq!(
        (
            retry["status"].as_str(),
            retry["attempts"].as_i64(),
            &retry["claimedBy"]
        ),
        (Some("pending"), Some(1), &Value::Null),
        "{retry}"
    );
    assert_eq!(report["fail_again"], json!(["IMPL-2"]));
    let last = &report["fail_final"];
    assert_eq!(
        (
            last["status"].as_str(),
            last["attempts"].as_i64(),
            last["failureReason"].as_str()
        ),
        (Some("failed"), Some(2), Some("no such project")),
        "{last}"
    );
    assert_eq!(report["whoami"]["agent"], "ex1");
    assert_eq!(report["whoami"]["role"], "executor");
    assert_eq!(report["whoami"]["claimPrefixes"], json!(["QARUN"]));
    assert_eq!(report["whoami"]["maxWaitMs"], 25000);
    let names: Vec<&str> = report["agents"]["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["coordinator", "ex1", "watcher"]);
}

/// Every property of a schema (and of its `$defs`), with its path, recursively.
fn properties<'a>(schema: &'a Value, path: &str, out: &mut Vec<(String, &'a Value)>) {
    if let Some(props) = schema["properties"].as_object() {
        for (name, prop) in props {
            let here = format!("{path}.{name}");
            out.push((here.clone(), prop));
            properties(prop, &here, out);
        }
    }
    for key in ["$defs", "definitions"] {
        if let Some(defs) = schema[key].as_object() {
            for (name, def) in defs {
                properties(def, &format!("{path}#{name}"), out);
            }
        }
    }
    for key in ["items", "anyOf", "oneOf", "allOf"] {
        match &schema[key] {
            Value::Array(list) => list.iter().for_each(|s| properties(s, path, out)),
            s @ Value::Object(_) => properties(s, path, out),
            _ => {}
        }
    }
}

#[tokio::test]
async fn every_tool_is_titled_annotated_described_and_bounded_like_the_server() {
    let d = TestDaemon::start_with(|s| {
        s.tasks.min_lease_ms = 250;
        s.tasks.max_lease_ms = 90_000;
        s.tasks.mcp_max_wait_ms = 12_000;
    })
    .await;
    let (report, _) = client_report(&d).await;
    let tools = report["tool_defs"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for tool in [
        "task_heartbeat",
        "task_release",
        "agent_list",
        "whoami",
        "task_gate",
        "task_answer",
    ] {
        assert!(names.contains(&tool), "{tool} is not listed: {names:?}");
    }
    let mut undocumented = Vec::new();
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        let notes = &tool["annotations"];
        assert!(notes["title"].is_string(), "{name} has no title: {tool}");
        assert!(notes["readOnlyHint"].is_boolean(), "{name}: {notes}");
        assert_eq!(notes["openWorldHint"], false, "{name}: {notes}");
        if notes["readOnlyHint"] == false {
            assert!(notes["destructiveHint"].is_boolean(), "{name}: {notes}");
            assert!(notes["idempotentHint"].is_boolean(), "{name}: {notes}");
        }
        let output = &tool["outputSchema"];
        assert_eq!(output["type"], "object", "{name}'s output schema: {output}");
        let description = tool["description"].as_str().unwrap_or("");
        assert!(description.len() > 20, "{name}: {description:?}");
        let mut props = Vec::new();
        properties(&tool["inputSchema"], name, &mut props);
        for (path, prop) in props {
            let said = prop["description"].as_str().unwrap_or("");
            if said.trim().is_empty() {
                undocumented.push(path);
            }
        }
    }
    assert!(
        undocumented.is_empty(),
        "undocumented input properties: {undocumented:#?}"
    );

    // The bounds in the schemas are the ones this daemon enforces.
    let schema_of =
        |tool: &str| tools.iter().find(|t| t["name"] == tool).unwrap()["inputSchema"].clone();
    let claim = schema_of("task_claim");
    assert_eq!(claim["properties"]["waitMs"]["maximum"], 12_000, "{claim}");
    assert_eq!(claim["properties"]["leaseMs"]["minimum"], 250, "{claim}");
    assert_eq!(claim["properties"]["leaseMs"]["maximum"], 90_000, "{claim}");
    assert_eq!(claim["properties"]["max"]["maximum"], 100, "{claim}");
    let beat = schema_of("task_heartbeat");
    assert_eq!(beat["properties"]["leaseMs"]["maximum"], 90_000, "{beat}");
    let inbox = schema_of("inbox_read");
    assert_eq!(inbox["properties"]["waitMs"]["maximum"], 12_000, "{inbox}");
    let gate = schema_of("task_gate");
    assert_eq!(gate["properties"]["question"]["maxLength"], 4000, "{gate}");
    let fail = schema_of("task_fail");
    let final_text = fail["properties"]["final"]["description"].as_str().unwrap();
    assert!(final_text.contains("tried again"), "{final_text}");
}
