//! `task_why_not_ready`: the tool answers what `GET …/tasks/{id}/why-not-ready` answers.

use super::history::{answer, call};
use huddle_tests::TestDaemon;
use serde_json::json;

#[tokio::test]
async fn the_tool_names_the_overlapping_task_as_the_api_does() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    c.post(
        &c.t("/tasks"),
        json!([{"id": "TEST-001", "subject": "s", "metadata": {"scope": ["src"]}},
               {"id": "TEST-002", "subject": "s", "metadata": {"scope": ["src/a.py"]}}]),
    )
    .await
    .expect_status(201);
    assert_eq!(tester.claim(json!({})).await.unwrap()["id"], "TEST-001");
    let (tool, error) = answer(
        &call(
            &d,
            &tester.token,
            "task_why_not_ready",
            json!({"id": "TEST-002"}),
        )
        .await,
    );
    assert!(!error, "{tool}");
    let http = c.get(&c.t("/tasks/TEST-002/why-not-ready")).await.body;
    assert_eq!(tool, http);
    assert_eq!(tool["reasons"][0]["holder"], "tester-1");
    let (missing, error) = answer(
        &call(
            &d,
            &tester.token,
            "task_why_not_ready",
            json!({"id": "TEST-404"}),
        )
        .await,
    );
    assert!(error, "{missing}");
}
