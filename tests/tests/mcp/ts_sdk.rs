//! The official TypeScript MCP SDK 1.x (`tests/mcp-ts/sdk.mjs`) against a real daemon: it
//! validates every structured answer against the tool's output schema — error results
//! included — so a refusal must reach it as the API's error (`not_holder`, `invalid_field`,
//! `not_found`) rather than `-32602 Structured content does not match the tool's output
//! schema`, and successful answers must pass its validation.

use huddle_tests::TestDaemon;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn package_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp-ts")
}

/// Node and the SDK, or a loud failure: this test is never skipped.
fn require_sdk() {
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(node, "node is required: run scripts/install-test-deps");
    assert!(
        package_dir()
            .join("node_modules/@modelcontextprotocol/sdk/package.json")
            .is_file(),
        "@modelcontextprotocol/sdk is not installed in tests/mcp-ts: run scripts/install-test-deps"
    );
}

/// A refusal as the SDK hands it to the agent: an error result with the API's code.
fn refused(report: &Value, key: &str, code: &str) {
    let r = &report[key];
    assert!(r["threw"].is_null(), "{key}: the SDK threw: {r}");
    assert_eq!(r["isError"], true, "{key}: {r}");
    assert_eq!(r["structured"]["error"]["code"], code, "{key}: {r}");
    let text = r["text"].as_str().unwrap_or_default();
    assert!(text.starts_with(&format!("{code}: ")), "{key}: {r}");
}

fn answered(report: &Value, key: &str) -> Value {
    let r = &report[key];
    assert!(r["threw"].is_null(), "{key}: the SDK threw: {r}");
    assert_eq!(r["isError"], false, "{key}: {r}");
    r["structured"].clone()
}

#[tokio::test]
async fn the_typescript_sdk_reads_answers_and_refusals_as_the_api_gives_them() {
    require_sdk();
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    let other = d.agent("qa", "tester-2", "tester").await;
    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-001", "subject": "migrate"}),
    )
    .await
    .expect_status(201);
    let url = format!("{}/mcp", d.url);
    let mut node = tokio::process::Command::new("node");
    node.arg("sdk.mjs")
        .current_dir(package_dir())
        .env("HUDDLE_MCP_URL", &url)
        .env("HUDDLE_TESTER", &tester.token)
        .env("HUDDLE_OTHER", &other.token)
        .kill_on_drop(true);
    let out = tokio::time::timeout(std::time::Duration::from_secs(120), node.output())
        .await
        .expect("the SDK script finishes")
        .expect("node runs");
    assert!(
        out.status.success(),
        "sdk.mjs failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("the script's JSON report");

    assert_eq!(report["toolsWithOutputSchema"], report["tools"], "{report}");
    assert_eq!(answered(&report, "whoami")["agent"], "tester-1");
    assert_eq!(answered(&report, "claimed")["tasks"][0]["id"], "TEST-001");
    refused(&report, "notHolder", "not_holder");
    refused(&report, "askNotHolder", "not_holder");
    refused(&report, "invalid", "invalid_field");
    refused(&report, "missing", "not_found");
    let asked = answered(&report, "asked");
    assert_eq!(asked["task"]["claimedBy"], "tester-1", "{asked}");
    assert_eq!(answered(&report, "decision")["status"], "open");
    assert_eq!(answered(&report, "completed")["status"], "completed");
}
