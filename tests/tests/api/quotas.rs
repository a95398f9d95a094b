//! Per-team quotas and settings over HTTP (SQLite, and PostgreSQL with
//! HUDDLE_TEST_BACKEND=postgres): the admin's `/v1/teams/{team}/settings`, the 409
//! `team_quota` refusal with its details, batches refused whole, the same through MCP, and an
//! override that raises a `[limits]` default.

use huddle_tests::TestDaemon;
use serde_json::{json, Value};

async fn task_ids(c: &huddle_tests::Api) -> Vec<String> {
    let body = c
        .get(&c.t("/tasks?limit=100"))
        .await
        .expect_status(200)
        .body;
    body["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

/// One MCP tool call over raw JSON-RPC; the tool's result.
async fn mcp(d: &TestDaemon, token: &str, tool: &str, arguments: Value) -> Value {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    });
    let response = reqwest::Client::new()
        .post(format!("{}/mcp", d.url))
        .header("accept", "application/json, text/event-stream")
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .expect("request");
    assert_eq!(response.status().as_u16(), 200);
    let reply: Value = response.json().await.expect("a JSON-RPC answer");
    reply["result"].clone()
}

#[tokio::test]
async fn a_write_past_a_quota_gets_409_team_quota_and_stores_nothing_until_the_admin_raises_it() {
    let d = TestDaemon::start_with(|s| {
        s.limits.max_tasks_per_team = 3;
        s.limits.max_messages_per_team = 2;
    })
    .await;
    let c = d.team("qa").await;
    let tester = d.agent("qa", "tester", "tester").await;
    c.post(
        &c.t("/tasks"),
        json!([{"id": "T-001", "subject": "a"}, {"id": "T-002", "subject": "b"}]),
    )
    .await
    .expect_status(201);
    let refused = c
        .post(
            &c.t("/tasks"),
            json!([{"id": "T-003", "subject": "c"}, {"id": "T-004", "subject": "d"}]),
        )
        .await
        .expect_error(409, "team_quota");
    assert_eq!(
        refused.body["error"]["details"],
        json!({"quota": "tasks", "limit": 3, "used": 2, "add": 2})
    );
    let message = refused.body["error"]["message"].as_str().unwrap();
    assert!(message.contains("tasks quota is 3"), "{message}");
    assert_eq!(
        task_ids(&c).await,
        ["T-001", "T-002"],
        "nothing of the batch"
    );

    // The same refusal through MCP, as a tool error with the API's error body.
    let result = mcp(
        &d,
        &c.token,
        "task_create",
        json!({"tasks": [{"id": "T-003", "subject": "c"}, {"id": "T-004", "subject": "d"}]}),
    )
    .await;
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        result["structuredContent"]["error"]["code"], "team_quota",
        "{result}"
    );
    assert_eq!(task_ids(&c).await, ["T-001", "T-002"]);

    // Messages: a batch past the quota is refused whole.
    let batch = json!({"messages": [
        {"to": "*", "type": "note", "summary": "1"},
        {"to": "*", "type": "note", "summary": "2"},
        {"to": "*", "type": "note", "summary": "3"},
    ]});
    let refused = tester
        .post(&tester.t("/messages/batch"), batch)
        .await
        .expect_error(409, "team_quota");
    assert_eq!(refused.body["error"]["details"]["quota"], "messages");
    let listed = tester.get(&tester.t("/messages")).await.expect_status(200);
    assert_eq!(listed.body["messages"], json!([]));

    // The admin raises the team's quota; the same batch goes through.
    let view = d
        .admin()
        .put("/v1/teams/qa/settings", json!({"quotas": {"maxTasks": 4}}))
        .await
        .expect_status(200)
        .body;
    assert_eq!(view["effectiveQuotas"]["maxTasks"], 4);
    assert_eq!(
        view["effectiveQuotas"]["maxMessages"], 2,
        "the default still"
    );
    c.post(
        &c.t("/tasks"),
        json!([{"id": "T-003", "subject": "c"}, {"id": "T-004", "subject": "d"}]),
    )
    .await
    .expect_status(201);
    let view = d
        .admin()
        .get("/v1/teams/qa/settings")
        .await
        .expect_status(200)
        .body;
    assert_eq!(view["usage"]["tasks"], 4);
    assert_eq!(view["quotas"], json!({"maxTasks": 4}));
}

#[tokio::test]
async fn team_settings_are_the_admins_and_refuse_bad_values() {
    let d = TestDaemon::start_with(|s| s.limits.max_edges_per_team = 7).await;
    let c = d.team("qa").await;
    let other = d.team("dev").await;
    let view = d
        .admin()
        .get("/v1/teams/qa/settings")
        .await
        .expect_status(200)
        .body;
    assert_eq!(view["quotas"], json!({}));
    assert_eq!(view["retention"], json!({}));
    assert_eq!(view["effectiveQuotas"]["maxEdges"], 7);
    assert_eq!(
        view["usage"],
        json!({"tasks": 0, "edges": 0, "messages": 0, "storageBytes": 2})
    );
    c.get("/v1/teams/qa/settings")
        .await
        .expect_error(403, "forbidden");
    other
        .put("/v1/teams/qa/settings", json!({}))
        .await
        .expect_error(404, "not_found");
    d.admin()
        .get("/v1/teams/nope/settings")
        .await
        .expect_error(404, "not_found");
    let typo = d
        .admin()
        .put("/v1/teams/qa/settings", json!({"quotas": {"maxTask": 1}}))
        .await
        .expect_error(400, "invalid_field");
    assert_eq!(typo.body["error"]["details"]["field"], "quotas.maxTask");
    d.admin()
        .put("/v1/teams/qa/settings", json!({"quotas": {"maxTasks": -1}}))
        .await
        .expect_status(400);
    let huge = json!({"retention": {"messagesKept": 1u64 << 60}});
    let refused = d
        .admin()
        .put("/v1/teams/qa/settings", huge)
        .await
        .expect_error(400, "invalid_field");
    assert_eq!(
        refused.body["error"]["details"]["field"],
        "retention.messagesKept"
    );
    let set = json!({"quotas": {"maxEdges": 0}, "retention": {"messagesKept": 10, "eventsMaxAgeHours": 24}});
    let view = d
        .admin()
        .put("/v1/teams/qa/settings", set.clone())
        .await
        .expect_status(200)
        .body;
    assert_eq!(view["quotas"], set["quotas"]);
    assert_eq!(view["retention"], set["retention"]);
    assert_eq!(view["effectiveQuotas"]["maxEdges"], 0, "0: no limit");
    // Settings survive a restart (they are the database's).
    let d = d.restart().await;
    let view = d
        .admin()
        .get("/v1/teams/qa/settings")
        .await
        .expect_status(200)
        .body;
    assert_eq!(view["retention"], set["retention"]);
}
