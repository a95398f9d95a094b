//! The seed's tester (`shared/seeds/000_…`) as written: it logs to `mcp__ccw-tools__team_msg`
//! before each `SendMessage`, takes its task with `TaskUpdate(in_progress)` and completes it
//! with `TaskUpdate(completed)`. `ccw-tools` is `huddle mcp` (the documented way that keeps the
//! skill's tool name) and the hook bridge is installed: real Claude Code, a scripted model.

use super::session::{call, lead_creates, settings, Machine};
use huddle_tests::cli::huddle_bin;
use huddle_tests::TestDaemon;
use serde_json::{json, Value};

#[tokio::test]
async fn the_seeds_tester_calls_run_unchanged_through_mcp_and_the_hooks() {
    let d = TestDaemon::start().await;
    let lead = d.team("qa").await;
    let tester = d.agent("qa", "tester", "tester").await;
    let machine = Machine::new(&d.url, "qa");
    lead_creates(&machine, &lead.token, &["TEST-001: auth suite"]).await;
    let mcp = json!({"mcpServers": {"ccw-tools": {
        "command": huddle_bin(),
        "args": ["mcp"],
        "env": {"HUDDLE_URL": d.url, "HUDDLE_TOKEN": tester.token},
    }}});
    let mcp_path = machine.dir.path().join("mcp.json");
    std::fs::write(&mcp_path, mcp.to_string()).unwrap();
    let settings = settings(true);

    // The skill's calls, verbatim but for the values it fills in.
    let turns = json!([
        call(
            "ToolSearch",
            json!({"query": "select:TaskUpdate,SendMessage,mcp__ccw-tools__team_msg"})
        ),
        call(
            "TaskUpdate",
            json!({"taskId": "1", "status": "in_progress"})
        ),
        call(
            "mcp__ccw-tools__team_msg",
            json!({
                "operation": "log", "team": "qa", "from": "tester", "to": "coordinator",
                "type": "test_result", "summary": "TEST-001通过: 98% pass rate, 3次迭代",
                "data": {"passRate": 98, "iterations": 3, "total": 42, "passed": 41, "failed": 1},
            })
        ),
        // Claude Code 2.1 names the recipient `to` and the text `message`: the seed's
        // `recipient`/`content` fail its own input validation, huddle or not.
        call(
            "SendMessage",
            json!({
                "to": "coordinator",
                "message": "## Test Results\n**Status**: PASSED",
                "summary": "Tests: 98% pass rate (3 iterations)",
            })
        ),
        call("TaskUpdate", json!({"taskId": "1", "status": "completed"})),
    ]);
    let args = [
        "--mcp-config".to_string(),
        mcp_path.display().to_string(),
        "--strict-mcp-config".to_string(),
        "--allowedTools".to_string(),
        "mcp__ccw-tools__team_msg".to_string(),
    ];
    let run = machine
        .session_with("tester", &tester.token, &settings, turns, &args)
        .await;
    let results = run.tool_results();
    assert!(
        results.contains("MSG-001"),
        "team_msg answered its id: {results}"
    );
    assert!(!results.contains("No such tool"), "{results}");

    let listed = lead.get(&lead.t("/messages")).await.expect_status(200).body;
    let messages = listed["messages"].as_array().expect("messages");
    let logged: Vec<&Value> = messages
        .iter()
        .filter(|m| m["type"] == "test_result")
        .collect();
    assert_eq!(logged.len(), 1, "{listed}");
    assert_eq!(logged[0]["from"], "tester");
    assert_eq!(logged[0]["summary"], "TEST-001通过: 98% pass rate, 3次迭代");
    let sent: Vec<&Value> = messages
        .iter()
        .filter(|m| m["summary"] == "Tests: 98% pass rate (3 iterations)")
        .collect();
    assert_eq!(sent.len(), 1, "SendMessage mirrored: {listed}");
    assert_eq!(sent[0]["to"], "coordinator");

    let task = lead
        .get(&lead.t("/tasks/TEST-001"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(task["claimedBy"], "tester", "{task}");
}
