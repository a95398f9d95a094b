//! `huddle mcp --forward <server>`: one stdio MCP server that is huddle's tools plus the user's
//! own server's, so a skill naming that server (`mcp__ccw-tools__team_msg`) works unchanged.
//! `front.py` (the official Python SDK's stdio client) starts the real `huddle` binary fronting
//! `files_server.py` (a stand-in user server with a file tool and its own `team_msg`).

use huddle_tests::cli::huddle_bin;
use huddle_tests::{python, TestDaemon};
use serde_json::Value;
use std::path::Path;

#[tokio::test]
async fn the_front_serves_huddles_tools_and_forwards_the_others_over_stdio() {
    python::require_modules(&["mcp"]);
    let d = TestDaemon::start().await;
    let coordinator = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    let files = tempfile::tempdir().unwrap();
    std::fs::write(files.path().join("notes.txt"), "the project's notes\n").unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/front.py");
    let output = python::run(
        &script,
        &[
            ("HUDDLE_BIN", huddle_bin().to_str().unwrap()),
            ("HUDDLE_URL", &d.url),
            ("HUDDLE_TOKEN", &tester.token),
            ("HUDDLE_TEAM_NAME", "qa"),
            ("FILES_ROOT", files.path().to_str().unwrap()),
        ],
    )
    .await;
    let r: Value = serde_json::from_slice(&output.stdout).expect("the script's JSON report");

    assert_eq!(r["server"], "huddle-mcp");
    let tools: Vec<&str> = r["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    for tool in ["team_msg", "task_claim", "msg_post", "read_file"] {
        assert!(tools.contains(&tool), "{tool} missing: {tools:?}");
    }
    assert_eq!(
        tools.iter().filter(|t| **t == "team_msg").count(),
        1,
        "one team_msg: huddle's"
    );
    assert!(
        !tools.contains(&"task_create"),
        "a tester's list: {tools:?}"
    );

    // The skill's call reached huddle, not the user's server's own team_msg.
    assert_eq!(r["team_msg_error"], false, "{}", r["team_msg"]);
    assert_eq!(r["team_msg"]["id"], "MSG-001");
    assert!(!files.path().join("local-team-msg.jsonl").exists());
    let listed = coordinator
        .get(&coordinator.t("/messages?type=test_result"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(listed["messages"][0]["summary"], "through the front");
    assert_eq!(listed["messages"][0]["from"], "tester-1");

    // The forwarded tool answered from the user's server.
    assert_eq!(r["read_file_error"], false);
    assert_eq!(r["read_file"][0], "the project's notes\n");

    // huddle's refusals come through as they are.
    assert_eq!(r["refused"]["error"]["code"], "forbidden");
    assert_eq!(
        r["prompts"],
        serde_json::json!(["coordinator_loop", "tester_loop"])
    );
}
