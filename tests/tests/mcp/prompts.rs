//! A tool list shaped to the reader, continued (`prompts.py`: the official Python SDK):
//! `task_list` answers compactly, with open blockers apart from completed ones, while REST's
//! task list stays whole; the tester and coordinator loops are MCP prompts.

use huddle_tests::{python, TestDaemon};
use serde_json::{json, Value};
use std::path::Path;

#[tokio::test]
async fn task_list_is_compact_with_open_blockers_apart_and_the_loops_are_prompts() {
    python::require_modules(&["mcp", "httpx2"]);
    let d = TestDaemon::start().await;
    let coordinator = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/prompts.py");
    let output = python::run(
        &script,
        &[
            ("HUDDLE_MCP_URL", &format!("{}/mcp", d.url)),
            ("HUDDLE_COORDINATOR", &coordinator.token),
            ("HUDDLE_TESTER", &tester.token),
        ],
    )
    .await;
    let r: Value = serde_json::from_slice(&output.stdout).expect("the script's JSON report");

    // Compact: only what picking work needs; the holder and lease while in progress.
    let held = &r["held"][0];
    assert_eq!(held["id"], "TEST-001");
    assert_eq!(held["claimedBy"], "tester-1");
    assert!(held["leaseExpiresAt"].is_string(), "{held}");
    let listed = r["listed"]["tasks"].as_array().unwrap();
    let e2e = listed.iter().find(|t| t["id"] == "TEST-002").unwrap();
    assert_eq!(
        e2e,
        &json!({"id": "TEST-002", "subject": "e2e", "status": "pending",
                "blockedBy": ["IMPL-001"], "doneBlockers": ["TEST-001"]})
    );
    let unit = listed.iter().find(|t| t["id"] == "TEST-001").unwrap();
    assert_eq!(
        unit,
        &json!({"id": "TEST-001", "subject": "unit tests", "status": "completed",
                "blockedBy": []})
    );
    assert_eq!(r["listed"]["next"], Value::Null);

    // REST is unchanged: whole tasks, every blocker in `blockedBy`.
    let rest = coordinator
        .get(&coordinator.t("/tasks/TEST-002"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(rest["blockedBy"], json!(["IMPL-001", "TEST-001"]));
    let rest = coordinator
        .get(&coordinator.t("/tasks"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(
        rest["tasks"][2]["blockedBy"],
        json!(["IMPL-001", "TEST-001"])
    );
    assert!(rest["tasks"][2]["metadata"]["big"].is_string());

    // The loops as prompts.
    assert_eq!(r["prompts_capability"], true);
    let names: Vec<&str> = r["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["tester_loop", "coordinator_loop"]);
    let tester_text = r["tester_prompt"][0].as_str().unwrap();
    for step in [
        "task_claim {prefixes: [\"TEST\"]",
        "task_heartbeat",
        "test_result",
        "task_complete",
    ] {
        assert!(tester_text.contains(step), "{step} missing: {tester_text}");
    }
    let coordinator_text = r["coordinator_prompt"][0].as_str().unwrap();
    assert!(coordinator_text.contains("The goal: ship 1.0"));
    assert!(coordinator_text.contains("task_create"));
    let unknown = r["unknown_prompt"].as_str().unwrap();
    assert!(unknown.contains("no prompt nope"), "{unknown}");
}
