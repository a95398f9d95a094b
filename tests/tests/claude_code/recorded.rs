//! `huddle hook` fed recorded hook input (the JSON Claude Code 2.1 sends, as captured from the
//! real binary), for what a scripted session cannot show without timing: a renewal extends
//! the lease, and a daemon that is down never blocks the session.

use huddle_tests::cli::huddle_bin;
use huddle_tests::TestDaemon;
use serde_json::{json, Value};
use std::process::{Output, Stdio};
use tokio::io::AsyncWriteExt;

/// Runs `huddle hook` on `event` as Claude Code would: the event on stdin, the agent's
/// connection in the environment.
async fn hook(url: &str, token: &str, state: &std::path::Path, event: &Value) -> Output {
    let mut child = tokio::process::Command::new(huddle_bin())
        .args(["hook", event["hook_event_name"].as_str().unwrap()])
        .env("HUDDLE_URL", url)
        .env("HUDDLE_TOKEN", token)
        .env("HUDDLE_TEAM", "qa")
        .env("HUDDLE_HOOK_STATE_DIR", state)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("huddle runs");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(event.to_string().as_bytes()).await.unwrap();
    drop(stdin);
    tokio::time::timeout(std::time::Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("the hook ends within Claude Code's 60 s")
        .unwrap()
}

fn lease_of(task: &Value) -> chrono::DateTime<chrono::Utc> {
    task["leaseExpiresAt"]
        .as_str()
        .expect("a lease")
        .parse()
        .expect("an RFC 3339 time")
}

#[tokio::test]
async fn any_tool_call_renews_the_sessions_leases_to_an_llm_step() {
    let d = TestDaemon::start().await;
    let lead = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    lead.post(
        &lead.t("/tasks"),
        json!({"id": "TEST-001", "subject": "auth"}),
    )
    .await
    .expect_status(201);
    // Held with a short lease, as a claim of another client's would be.
    let claimed = tester
        .post(&tester.t("/tasks/claim"), json!({"leaseMs": 30_000}))
        .await
        .expect_status(200)
        .body;
    let state = tempfile::tempdir().unwrap();
    std::fs::write(state.path().join("s-1.json"), r#"{"1":"TEST-001"}"#).unwrap();

    let event = json!({
        "session_id": "s-1", "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "npm test"}, "tool_response": {"stdout": "ok"},
        "tool_use_id": "toolu_1",
    });
    let out = hook(&d.url, &tester.token, state.path(), &event).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.is_empty(),
        "a renewal says nothing to Claude Code"
    );

    let task = tester
        .get(&tester.t("/tasks/TEST-001"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(task["claimedBy"], "tester-1");
    let renewed = lease_of(&task) - lease_of(&claimed);
    assert!(
        renewed > chrono::Duration::minutes(5),
        "the 30 s lease became the hook's 10 minutes: {claimed} → {task}"
    );
}

#[tokio::test]
async fn a_daemon_that_is_down_never_blocks_the_session() {
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let state = tempfile::tempdir().unwrap();
    let event = json!({
        "session_id": "s-2", "hook_event_name": "PreToolUse", "tool_name": "TaskUpdate",
        "tool_input": {"taskId": "1", "status": "in_progress"}, "tool_use_id": "toolu_2",
    });
    let out = hook(
        &format!("http://127.0.0.1:{port}"),
        "t0ken",
        state.path(),
        &event,
    )
    .await;
    assert!(out.status.success());
    assert!(
        out.stdout.is_empty(),
        "no denial: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("huddle hook: cannot reach"), "{said}");
}

#[tokio::test]
async fn putting_a_task_back_to_pending_releases_it_in_huddle() {
    let d = TestDaemon::start().await;
    let lead = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    lead.post(
        &lead.t("/tasks"),
        json!({"id": "TEST-001", "subject": "auth"}),
    )
    .await
    .expect_status(201);
    tester
        .post(&tester.t("/tasks/claim"), json!({}))
        .await
        .expect_status(200);
    let state = tempfile::tempdir().unwrap();
    std::fs::write(state.path().join("s-3.json"), r#"{"1":"TEST-001"}"#).unwrap();

    let event = json!({
        "session_id": "s-3", "hook_event_name": "PreToolUse", "tool_name": "TaskUpdate",
        "tool_input": {"taskId": "1", "status": "pending"}, "tool_use_id": "toolu_3",
    });
    let out = hook(&d.url, &tester.token, state.path(), &event).await;
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    let task = lead
        .get(&lead.t("/tasks/TEST-001"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(task["status"], "pending", "{task}");
    assert!(task["claimedBy"].is_null(), "{task}");
    assert!(!state.path().join("s-3.json").exists(), "no longer held");
}

#[tokio::test]
async fn taking_a_task_whose_scope_overlaps_one_in_progress_is_denied_naming_the_holder() {
    let d = TestDaemon::start().await;
    let lead = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    let other = d.agent("qa", "tester-2", "tester").await;
    // TEST-002 first, so the other tester's plain claim takes it.
    for (id, n, scope) in [("TEST-002", "2", "src"), ("TEST-001", "1", "src/auth.py")] {
        lead.post(
            &lead.t("/tasks"),
            json!({"id": id, "subject": "auth", "metadata": {
                "claudeTaskId": n, "project": format!("claude-task:{n}"), "scope": [scope]}}),
        )
        .await
        .expect_status(201);
    }
    let held = other.claim(json!({})).await.expect("a task");
    assert_eq!(held["id"], "TEST-002");
    let state = tempfile::tempdir().unwrap();
    let event = json!({
        "session_id": "s-4", "hook_event_name": "PreToolUse", "tool_name": "TaskUpdate",
        "tool_input": {"taskId": "1", "status": "in_progress"}, "tool_use_id": "toolu_4",
    });
    let out = hook(&d.url, &tester.token, state.path(), &event).await;
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("deny"), "{said}");
    assert!(
        said.contains("TEST-002") && said.contains("tester-2") && said.contains("src/auth.py"),
        "the model reads which task and holder: {said}"
    );
    let task = lead.get(&lead.t("/tasks/TEST-001")).await.body;
    assert_eq!(task["status"], "pending", "{task}");
}
