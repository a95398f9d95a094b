//! `/mcp` authenticates like the API, before any MCP is spoken: no token or an unknown one is
//! 401 in the API's error shape; the admin token (which acts on no team) is 403.

use huddle_tests::{TestDaemon, ADMIN};
use serde_json::{json, Value};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#;

async fn post(d: &TestDaemon, token: Option<&str>) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{}/mcp", d.url))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(INITIALIZE);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn mcp_without_a_token_or_with_an_unknown_one_is_401() {
    let d = TestDaemon::start().await;
    for token in [None, Some("hud_not-a-token")] {
        let (status, body) = post(&d, token).await;
        assert_eq!(status, 401, "{token:?}: {body}");
        assert_eq!(body["error"]["code"], "unauthorized", "{body}");
    }
}

#[tokio::test]
async fn mcp_with_the_admin_token_is_403_and_with_a_revoked_token_401() {
    let d = TestDaemon::start().await;
    d.team("qa").await;
    let (status, body) = post(&d, Some(ADMIN)).await;
    assert_eq!((status, &body["error"]["code"]), (403, &json!("forbidden")));

    let agent = d.agent("qa", "ex1", "executor").await;
    let (status, body) = post(&d, Some(&agent.token)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["serverInfo"]["name"], "huddled", "{body}");
    d.admin()
        .post("/v1/teams/qa/agents/ex1/revoke", json!({}))
        .await
        .expect_status(200);
    let (status, _) = post(&d, Some(&agent.token)).await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn a_body_that_is_not_json_is_a_json_rpc_parse_error_whatever_its_content_type() {
    let d = TestDaemon::start().await;
    d.team("qa").await;
    let agent = d.agent("qa", "ex1", "executor").await;
    for content_type in ["application/json", "text/plain"] {
        let response = reqwest::Client::new()
            .post(format!("{}/mcp", d.url))
            .bearer_auth(&agent.token)
            .header("content-type", content_type)
            .header("accept", "application/json, text/event-stream")
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"#)
            .send()
            .await
            .expect("request");
        assert_eq!(response.status().as_u16(), 400, "{content_type}");
        let body: Value = response.json().await.expect("a JSON-RPC body");
        assert_eq!(body["jsonrpc"], "2.0", "{body}");
        assert_eq!(body["id"], Value::Null, "{body}");
        assert_eq!(body["error"]["code"], -32700, "{body}");
    }
}

/// Every refusal of the transport itself — a wrong `Accept` or `Content-Type`, a body that is
/// JSON but not a JSON-RPC message, a method the stateless transport does not serve — is a
/// JSON-RPC error object (never plain text), with the HTTP status the transport chose.
#[tokio::test]
async fn transport_refusals_are_json_rpc_errors() {
    let d = TestDaemon::start().await;
    d.team("qa").await;
    let agent = d.agent("qa", "ex1", "executor").await;
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let cases: [(&str, &str, &str, &str); 5] = [
        ("POST", "text/html", "application/json", init),
        (
            "POST",
            "application/json, text/event-stream",
            "text/plain",
            init,
        ),
        (
            "POST",
            "application/json, text/event-stream",
            "application/json",
            r#"{"hello":"world"}"#,
        ),
        ("GET", "text/event-stream", "application/json", ""),
        ("DELETE", "application/json", "application/json", ""),
    ];
    for (method, accept, content_type, body) in cases {
        let response = reqwest::Client::new()
            .request(method.parse().unwrap(), format!("{}/mcp", d.url))
            .bearer_auth(&agent.token)
            .header("accept", accept)
            .header("content-type", content_type)
            .body(body.to_string())
            .send()
            .await
            .expect("request");
        let status = response.status().as_u16();
        let text = response.text().await.expect("body");
        let case =
            format!("{method} accept={accept} content-type={content_type} {body}: {status} {text}");
        assert!((400..500).contains(&status), "{case}");
        let parsed: Value =
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {case}"));
        assert_eq!(parsed["jsonrpc"], "2.0", "{case}");
        assert!(
            parsed["error"]["code"].as_i64().is_some_and(|c| c < 0),
            "{case}"
        );
        assert!(
            parsed["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{case}"
        );
    }
}
