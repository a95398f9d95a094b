//! A JSON Patch that doubles the document with each `copy` from the root is refused at the
//! operation that would pass the size limit, before it allocates: over HTTP and over MCP's
//! `memory_patch`, against a real `huddled` child whose peak memory is read from /proc.

use huddle_tests::process::HuddledProcess;
use huddle_tests::Api;
use serde_json::{json, Value};

const ADMIN: &str = "patch-bomb-admin-token-0123456789abcdef";

/// 16 `copy` operations from the root: 2^16 times the document if nothing stops it.
fn doubling_patch() -> Value {
    Value::Array(
        (0..16)
            .map(|i| json!({"op": "copy", "from": "", "path": format!("/k{i}")}))
            .collect(),
    )
}

async fn agent(url: &str, team: &str, name: &str, role: &str) -> Api {
    let admin = Api::new(url, ADMIN);
    let reply = admin
        .post(
            &format!("/v1/teams/{team}/agents"),
            json!({"name": name, "role": role}),
        )
        .await
        .expect_status(201);
    Api::new(url, reply.body["token"].as_str().expect("token")).in_team(team)
}

#[tokio::test]
async fn a_doubling_json_patch_is_refused_before_it_allocates_over_http_and_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let daemon =
        HuddledProcess::start(dir.path(), &[("HUDDLE_ADMIN_TOKEN", ADMIN)]).expect("huddled");
    Api::new(&daemon.url, ADMIN)
        .post("/v1/teams", json!({"name": "qa"}))
        .await
        .expect_status(201);
    let coordinator = agent(&daemon.url, "qa", "coordinator", "coordinator").await;
    let tester = agent(&daemon.url, "qa", "tester", "tester").await;

    // A 100 KB document (the limit is 1 MB).
    let doc = json!({"notes": (0..1000).map(|i| format!("{i:0>96}")).collect::<Vec<_>>()});
    coordinator
        .put(&coordinator.t("/memory"), json!({"doc": doc}))
        .await
        .expect_status(200);
    let before = coordinator
        .get(&coordinator.t("/memory"))
        .await
        .expect_status(200);
    let peak_before = daemon.peak_rss();
    assert!(peak_before > 0, "VmHWM is readable");

    let body = doubling_patch().to_string().into_bytes();
    assert!(body.len() < 1024, "the attack is a small request");
    let refused = tester
        .send(
            reqwest::Method::PATCH,
            &tester.t("/memory"),
            Some(body),
            &[("content-type", "application/json-patch+json")],
        )
        .await
        .expect_error(413, "too_large");
    let message = refused.body["error"]["message"]
        .as_str()
        .unwrap_or_default();
    // 100 KB → 200 → 400 → 800 KB; the fourth copy (operation 3) would pass 1 MB.
    assert!(message.contains("operation 3"), "{message}");
    assert!(message.contains("1048576"), "{message}");

    let mcp = mcp_memory_patch(&daemon.url, &tester.token, doubling_patch()).await;
    assert_eq!(mcp["isError"], true, "{mcp}");
    let text = mcp["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("too_large"), "{text}");

    let after = coordinator
        .get(&coordinator.t("/memory"))
        .await
        .expect_status(200);
    assert_eq!(after.body, before.body, "the document is unchanged");
    let grown = daemon.peak_rss().saturating_sub(peak_before);
    assert!(
        grown < 100 * 1024 * 1024,
        "the daemon's peak memory grew by {grown} bytes"
    );
    // Still serving writes afterwards.
    tester
        .patch(&tester.t("/memory"), json!({"after": true}))
        .await
        .expect_status(200);
}

async fn mcp_memory_patch(url: &str, token: &str, patch: Value) -> Value {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "memory_patch", "arguments": {"patch": patch, "jsonPatch": true}},
    });
    let response = reqwest::Client::new()
        .post(format!("{url}/mcp"))
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
