//! One request may add only so many `blockedBy` edges (`[limits] max_blocked_by_per_request`),
//! refused with 413 before it reaches the writer; cycles are still found across long chains.

use huddle_tests::TestDaemon;
use serde_json::{json, Value};

fn ids(from: usize, to: usize) -> Vec<String> {
    (from..=to).map(|i| format!("DEP-{i:03}")).collect()
}

#[tokio::test]
async fn blocked_by_edges_per_request_are_limited_with_413_naming_the_limit() {
    let d = TestDaemon::start_with(|s| {
        s.limits.max_blocked_by_per_request = 10;
        s.limits.max_blocked_by = 5;
    })
    .await;
    let c = d.team("qa").await;
    let base: Vec<Value> = ids(1, 5)
        .into_iter()
        .map(|id| json!({"id": id, "subject": "base"}))
        .collect();
    c.post(&c.t("/tasks"), Value::Array(base))
        .await
        .expect_status(201);
    let batch = |n: usize, blockers: usize| {
        let tasks: Vec<Value> = (0..n)
            .map(|i| json!({"prefix": "NEW", "subject": format!("t{i}"), "blockedBy": ids(1, blockers)}))
            .collect();
        Value::Array(tasks)
    };
    // 2 × 5 = 10 edges: the limit, accepted.
    c.post(&c.t("/tasks"), batch(2, 5)).await.expect_status(201);
    // 3 × 4 = 12 edges: refused, naming the limit; nothing is created.
    let refused = c
        .post(&c.t("/tasks"), batch(3, 4))
        .await
        .expect_error(413, "too_large");
    let message = refused.body["error"]["message"].as_str().unwrap();
    assert!(message.contains("max_blocked_by_per_request"), "{message}");
    assert!(
        message.contains("12") && message.contains("10"),
        "{message}"
    );
    let listed = c.get(&c.t("/tasks?prefix=NEW")).await.expect_status(200);
    assert_eq!(listed.body["tasks"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn a_cycle_through_a_long_chain_is_found_and_named() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    // DEP-001 ← DEP-002 ← … ← DEP-200: each blocked by the previous one.
    let chain: Vec<Value> = (1..=200)
        .map(|i| {
            let blocked_by: Vec<String> = if i == 1 { vec![] } else { ids(i - 1, i - 1) };
            json!({"id": format!("DEP-{i:03}"), "subject": "link", "blockedBy": blocked_by})
        })
        .collect();
    c.post(&c.t("/tasks"), Value::Array(chain))
        .await
        .expect_status(201);
    // New tasks blocked by many links of the chain: no cycle.
    let fan: Vec<Value> = (0..20)
        .map(|i| json!({"prefix": "FAN", "subject": format!("f{i}"), "blockedBy": ids(100, 199)}))
        .collect();
    c.post(&c.t("/tasks"), Value::Array(fan))
        .await
        .expect_status(201);
    // DEP-001 blocked by DEP-200 would close the whole chain.
    let cycle = c
        .patch(&c.t("/tasks/DEP-001"), json!({"addBlockedBy": ["DEP-200"]}))
        .await
        .expect_error(409, "dependency_cycle");
    let names: Vec<String> =
        serde_json::from_value(cycle.body["error"]["details"]["cycle"].clone()).unwrap();
    let mut want = vec!["DEP-001".to_string()];
    want.extend(ids(1, 200).into_iter().rev());
    assert_eq!(names, want);
}
