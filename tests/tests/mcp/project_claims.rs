//! `task_claim` with `project` over raw JSON-RPC: it takes only tasks its filter admits, and a
//! bad filter is refused with the API's code and field.

use huddle_tests::{Api, TestDaemon};
use serde_json::{json, Value};

/// One `tools/call` of `task_claim`; the tool's structured answer (`{"error": …}` when refused).
async fn task_claim(d: &TestDaemon, token: &str, args: Value) -> Value {
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "task_claim", "arguments": args}});
    let response = reqwest::Client::new()
        .post(format!("{}/mcp", d.url))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(&call)
        .send()
        .await
        .expect("request");
    assert_eq!(response.status().as_u16(), 200);
    let body: Value = response.json().await.expect("a JSON-RPC answer");
    assert!(body["error"].is_null(), "{body}");
    body["result"]["structuredContent"].clone()
}

async fn create(coord: &Api, id: &str, project: &str) {
    coord
        .post(
            &coord.t("/tasks"),
            json!({"id": id, "subject": id, "metadata": {"project": project}}),
        )
        .await
        .expect_status(201);
}

#[tokio::test]
async fn task_claim_takes_only_the_tasks_of_its_project() {
    let d = TestDaemon::start().await;
    let coord = d.team("qa").await;
    let tester = d.agent("qa", "calc-tester", "tester").await;
    create(&coord, "TEST-001", "shop").await;
    create(&coord, "TEST-002", "calc").await;

    let strict = json!({"project": "calc", "strictProject": true});
    let got = task_claim(&d, &tester.token, strict.clone()).await;
    let ids: Vec<&Value> = got["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| &t["id"])
        .collect();
    assert_eq!(ids, [&json!("TEST-002")], "{got}");
    let got = task_claim(&d, &tester.token, strict).await;
    assert_eq!(got["tasks"], json!([]), "{got}");
    let shop = coord.get(&coord.t("/tasks/TEST-001")).await.body;
    assert_eq!(shop["status"], "pending");

    let refused = task_claim(&d, &tester.token, json!({"project": ""})).await;
    assert_eq!(refused["error"]["code"], "invalid_field", "{refused}");
    assert_eq!(refused["error"]["details"]["field"], "project", "{refused}");
}
