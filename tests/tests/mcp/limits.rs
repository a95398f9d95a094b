//! Every documented limit holds over both surfaces: just past it, the HTTP request and the MCP
//! tool call are refused with the same error code (over HTTP with the code's status); at it,
//! both are accepted where that is cheap. The daemon runs with the defaults, the values
//! `config/huddle.toml` and SECURITY.md document, and the inputs are built from its settings.

mod cases;

use super::history::call;
use cases::{at_the_limit, ids, past_the_limit, Http};
use huddle_tests::{Api, TestDaemon};
use reqwest::Method;
use serde_json::{json, Value};

/// An answer cut for a failure message (an accepted batch echoes thousands of ids).
fn short(answer: &Value) -> String {
    let text = answer.to_string();
    match text.char_indices().nth(400) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

async fn over_http(c: &Api, http: &Http) -> huddle_tests::Reply {
    let bytes = |v: &Value| Some(v.to_string().into_bytes());
    match http {
        Http::Get(path) => c.get(path).await,
        Http::Post(path, body) => c.send(Method::POST, path, bytes(body), &[]).await,
        Http::Patch(path, body) => c.send(Method::PATCH, path, bytes(body), &[]).await,
        Http::PostKeyed(path, body, key) => {
            let headers = [("Idempotency-Key", key.as_str())];
            c.send(Method::POST, path, bytes(body), &headers).await
        }
    }
}

#[tokio::test]
async fn every_documented_limit_refuses_alike_over_http_and_mcp() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let l = &d.settings.limits;
    // The documented defaults (config/huddle.toml, SECURITY.md) are what runs here.
    assert_eq!(l.max_blocked_by_per_request, 5_000);
    assert_eq!(l.max_batch, 1_000);

    let blockers: Vec<Value> = ids("DEP", 1, l.max_blocked_by + 1)
        .into_iter()
        .map(|id| json!({"id": id, "subject": "blocker"}))
        .collect();
    c.post(&c.t("/tasks"), Value::Array(blockers))
        .await
        .expect_status(201);
    let lim: Vec<Value> = ids("LIM", 1, 3)
        .into_iter()
        .map(|id| json!({"id": id, "subject": "limits"}))
        .collect();
    c.post(&c.t("/tasks"), Value::Array(lim))
        .await
        .expect_status(201);
    c.post(&c.t("/tasks/LIM-002/gate"), json!({"question": "ok?"}))
        .await
        .expect_status(201);
    let big = json!({ "big": "x".repeat(d.settings.memory.max_bytes * 3 / 5) });
    c.patch(&c.t("/memory"), big).await.expect_status(200);

    let mut failures = Vec::new();
    for (case, status, code) in past_the_limit(&d, &c) {
        let http = over_http(&c, &case.http).await;
        if (http.status.as_u16(), http.body["error"]["code"].as_str()) != (status, Some(code)) {
            failures.push(format!(
                "{} over HTTP: want {status} {code}, got {} {}",
                case.what,
                http.status,
                short(&http.body)
            ));
        }
        let mcp = call(&d, &c.token, case.tool, case.args).await;
        let error = &mcp["structuredContent"]["error"];
        if mcp["isError"] != true || error["code"] != code {
            failures.push(format!(
                "{} over MCP ({}): want {code}, got {}",
                case.what,
                case.tool,
                short(&mcp)
            ));
        }
    }
    for case in at_the_limit(&d, &c) {
        let http = over_http(&c, &case.http).await;
        if !http.status.is_success() {
            failures.push(format!(
                "{} over HTTP: refused at the limit: {} {}",
                case.what,
                http.status,
                short(&http.body)
            ));
        }
        let mcp = call(&d, &c.token, case.tool, case.args).await;
        if mcp["isError"] == true {
            failures.push(format!(
                "{} over MCP ({}): refused at the limit: {}",
                case.what,
                case.tool,
                short(&mcp)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // Nothing past a limit was stored: the EDGE tasks are the two at-the-limit batches.
    let edged = c.get(&c.t("/tasks?prefix=EDGE&limit=1000")).await;
    let edged = edged.expect_status(200).body["tasks"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(edged, 2 * (l.max_blocked_by_per_request / l.max_blocked_by));
    let gated = c.get(&c.t("/tasks/LIM-003")).await.expect_status(200);
    assert_eq!(gated.body["blockedBy"], json!([]), "no gate past the limit");
}

/// The body cap is the transport's: over HTTP the API's 413, over MCP the same status with a
/// JSON-RPC error (no tool runs, so there is no tool error to carry a code).
#[tokio::test]
async fn a_body_past_max_body_bytes_is_refused_with_413_on_both_surfaces() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let max = d.settings.server.max_body_bytes;
    let body = json!({"prefix": "BODY", "subject": "s", "description": "d".repeat(max)});
    c.post(&c.t("/tasks"), body.clone())
        .await
        .expect_error(413, "too_large");
    let rpc = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "task_create", "arguments": {"tasks": body}},
    });
    let response = reqwest::Client::new()
        .post(format!("{}/mcp", d.url))
        .header("accept", "application/json, text/event-stream")
        .bearer_auth(&c.token)
        .json(&rpc)
        .send()
        .await
        .expect("request");
    assert_eq!(response.status().as_u16(), 413);
    let reply: Value = response.json().await.expect("a JSON-RPC answer");
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
}
