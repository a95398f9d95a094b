//! Shared memory over real HTTP: merge patch, pointer reads, replace, If-Match, size cap, history.

use huddle_tests::TestDaemon;
use serde_json::json;

#[tokio::test]
async fn memory_merges_reads_by_pointer_and_refuses_stale_versions() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let t = d.agent("qa", "tester", "tester").await;
    let empty = c.get(&c.t("/memory")).await.expect_status(200);
    assert_eq!(empty.body, json!({"version": 0, "doc": {}}));
    let patch = json!({"test_strategy": {"test_framework": "pytest", "layers": ["L1", "L2"]}})
        .to_string()
        .into_bytes();
    let m = c
        .send(
            reqwest::Method::PATCH,
            &c.t("/memory"),
            Some(patch),
            &[("content-type", "application/merge-patch+json")],
        )
        .await
        .expect_status(200);
    assert_eq!(m.body["version"], 1);
    assert_eq!(m.headers["etag"], "\"1\"");
    let p = t
        .get(&t.t("/memory/test_strategy/layers/1"))
        .await
        .expect_status(200);
    assert_eq!(p.body, "L2");
    t.get(&t.t("/memory/test_strategy/missing"))
        .await
        .expect_error(404, "not_found");

    let body = json!({"execution_results": {"L1": {"passRate": 97.5}}})
        .to_string()
        .into_bytes();
    t.send(
        reqwest::Method::PATCH,
        &t.t("/memory"),
        Some(body.clone()),
        &[("If-Match", "\"1\"")],
    )
    .await
    .expect_status(200);
    t.send(
        reqwest::Method::PATCH,
        &t.t("/memory"),
        Some(body),
        &[("If-Match", "\"1\"")],
    )
    .await
    .expect_error(412, "stale_version");
    // `*` matches whatever version is current (RFC 9110).
    let any = json!({"execution_results": {"L1": {"passRate": 97.5}}})
        .to_string()
        .into_bytes();
    t.send(
        reqwest::Method::PATCH,
        &t.t("/memory"),
        Some(any),
        &[("If-Match", "*")],
    )
    .await
    .expect_status(200);
    let removed = c
        .patch(&c.t("/memory"), json!({"test_strategy": null}))
        .await
        .expect_status(200);
    assert_eq!(
        removed.body["doc"],
        json!({"execution_results": {"L1": {"passRate": 97.5}}})
    );

    let replaced = c
        .put(&c.t("/memory"), json!({"doc": {"generated_tests": []}}))
        .await
        .expect_status(200);
    assert_eq!(
        replaced.body,
        json!({"version": 5, "doc": {"generated_tests": []}})
    );
    let history = c.get(&c.t("/memory-history")).await.expect_status(200);
    let changes = history.body["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 5);
    assert_eq!(changes[0]["kind"], "replace");
    assert_eq!(changes[2]["agent"], "tester");
}

#[tokio::test]
async fn a_document_past_the_cap_is_refused_with_413_and_nothing_changes() {
    let d = TestDaemon::start_with(|s| s.memory.max_bytes = 2048).await;
    let c = d.team("qa").await;
    c.patch(&c.t("/memory"), json!({"small": true}))
        .await
        .expect_status(200);
    c.patch(&c.t("/memory"), json!({"big": "x".repeat(3000)}))
        .await
        .expect_error(413, "too_large");
    c.put(&c.t("/memory"), json!({"doc": {"big": "x".repeat(3000)}}))
        .await
        .expect_error(413, "too_large");
    c.put(&c.t("/memory"), json!({"doc": [1, 2]}))
        .await
        .expect_error(400, "invalid_field");
    let m = c.get(&c.t("/memory")).await.expect_status(200);
    assert_eq!(m.body, json!({"version": 1, "doc": {"small": true}}));
}
