//! `msg_search` over raw JSON-RPC: the same matches and total as the HTTP search, its answer
//! valid against the tool's outputSchema component, a bad filter refused as a tool error
//! naming the field.

use super::history::{answer, call};
use huddle_tests::TestDaemon;
use serde_json::json;

#[tokio::test]
async fn msg_search_finds_by_words_and_task_like_the_api() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    for (summary, task) in [
        ("TEST-001: average([5]) returned 2.5", "TEST-001"),
        ("TEST-002: all 3 passed", "TEST-002"),
        ("fix applied to stats.average", "TEST-001"),
    ] {
        tester
            .post(
                &tester.t("/messages"),
                json!({"to": "coordinator", "type": "test_result", "summary": summary, "data": {"taskId": task}}),
            )
            .await
            .expect_status(201);
    }
    let (found, error) = answer(
        &call(
            &d,
            &tester.token,
            "msg_search",
            json!({"q": "average", "task": "TEST-001"}),
        )
        .await,
    );
    assert!(!error, "{found}");
    assert_eq!(found["total"], 2, "{found}");
    let seqs: Vec<i64> = found["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["seq"].as_i64().unwrap())
        .collect();
    assert_eq!(seqs, [3, 1], "newest first");
    let http = c
        .get(&c.t("/messages/search?q=average&task=TEST-001"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(http["messages"], found["messages"]);

    let refused = call(
        &d,
        &tester.token,
        "msg_search",
        json!({"since": "last week"}),
    )
    .await;
    assert_eq!(refused["isError"], true, "{refused}");
    let error = &refused["structuredContent"]["error"];
    assert_eq!(error["code"], "invalid_field", "{refused}");
    assert_eq!(error["details"]["field"], "since", "{refused}");
}
