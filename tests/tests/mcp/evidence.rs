//! `task_complete` over MCP checks evidence as the HTTP route does: a task that requires it is
//! refused `evidence_required` without a run, and completes on a run `history_post` stored for
//! it, the result marked as checked by the daemon.

use super::history::{answer, call};
use huddle_tests::TestDaemon;
use serde_json::json;

#[tokio::test]
async fn task_complete_over_mcp_requires_and_checks_evidence() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let t = d.agent("qa", "tester-1", "tester").await;
    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-001", "subject": "fix", "metadata": {"requireEvidence": true}}),
    )
    .await
    .expect_status(201);
    assert_eq!(t.claim(json!({})).await.unwrap()["id"], "TEST-001");

    let refused = call(&d, &t.token, "task_complete", json!({"id": "TEST-001"})).await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(
        refused["structuredContent"]["error"]["code"], "evidence_required",
        "{refused}"
    );

    let posted = call(
        &d,
        &t.token,
        "history_post",
        json!({"project": "calc", "tree": "t1", "task": "TEST-001",
               "outcomes": [{"nodeid": "t.py::a", "outcome": "passed"}]}),
    )
    .await;
    let (run, error) = answer(&posted);
    assert!(!error, "{posted}");
    let done = call(
        &d,
        &t.token,
        "task_complete",
        json!({"id": "TEST-001", "result": {"evidence":
            {"runId": run["id"], "project": "calc", "tree": "t1"}}}),
    )
    .await;
    let (task, error) = answer(&done);
    assert!(!error, "{done}");
    assert_eq!(task["status"], "completed");
    assert_eq!(task["result"]["evidence"]["checked"]["by"], "huddled");
}
