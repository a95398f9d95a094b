//! Message search over real HTTP: every one of 1,200 messages is reachable by paging a search,
//! `total` is the exact count for each filter, bad filters get 400 naming the field, and a token
//! of another team or the admin's finds nothing of the team.

use huddle_tests::TestDaemon;
use serde_json::{json, Value};

#[tokio::test]
async fn every_message_is_reachable_and_counts_are_exact() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    // 1,200 messages in batches: every third a fix_required about TEST-<n % 40>.
    for batch in 0..12 {
        let messages: Vec<Value> = (0..100)
            .map(|i| {
                let n = batch * 100 + i;
                let kind = if n % 3 == 0 {
                    "fix_required"
                } else {
                    "test_result"
                };
                json!({"to": "coordinator", "type": kind,
                       "summary": format!("run {n}: average failed on TEST-{:03}", n % 40),
                       "data": {"taskId": format!("TEST-{:03}", n % 40), "n": n}})
            })
            .collect();
        tester
            .post(
                &tester.t("/messages/batch"),
                json!({ "messages": messages }),
            )
            .await
            .expect_status(201);
    }

    // Paging a filter newest first reaches every match exactly once.
    let mut seen = Vec::new();
    let mut before: Option<i64> = None;
    loop {
        let mut path = c.t("/messages/search?type=fix_required&limit=150");
        if let Some(b) = before {
            path.push_str(&format!("&before={b}"));
        }
        let page = c.get(&path).await.expect_status(200).body;
        assert_eq!(page["total"], 400, "{}", page["total"]);
        let seqs: Vec<i64> = page["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["seq"].as_i64().unwrap())
            .collect();
        seen.extend(seqs);
        match page["next"].as_i64() {
            Some(next) => before = Some(next),
            None => break,
        }
    }
    let expected: Vec<i64> = (1..=1200).rev().filter(|s| (s - 1) % 3 == 0).collect();
    assert_eq!(seen, expected, "every fix_required once, newest first");

    // Exact counts for words, a task, a sender and their combination.
    let total = |query: &str| {
        let c = c.clone();
        let path = c.t(&format!("/messages/search?{query}"));
        async move { c.get(&path).await.expect_status(200).body["total"].clone() }
    };
    assert_eq!(total("q=average").await, 1200);
    assert_eq!(total("q=TEST-007").await, 30);
    assert_eq!(total("task=TEST-007").await, 30);
    assert_eq!(total("task=TEST-007&type=fix_required").await, 10);
    assert_eq!(total("q=run%201199%3A").await, 1);
    assert_eq!(total("from=tester-1&q=nothing-like-this").await, 0);
    assert_eq!(total("from=coordinator").await, 0);
    assert_eq!(
        total("since=2000-01-01T00:00:00Z&until=2999-01-01T00:00:00Z").await,
        1200
    );

    // Bad filters name the field.
    for (query, field) in [
        ("since=yesterday", "since"),
        ("until=", "until"),
        ("until=2024-13-01T00:00:00Z", "until"),
        ("limit=0", "limit"),
    ] {
        let r = c.get(&c.t(&format!("/messages/search?{query}"))).await;
        let r = r.expect_error(400, "invalid_field");
        assert_eq!(
            r.body["error"]["details"]["field"], field,
            "{query}: {}",
            r.body
        );
    }
    c.get(&c.t("/messages/search?bogus=1"))
        .await
        .expect_error(400, "invalid_query");
    let long = "w ".repeat(17);
    c.get(&c.t(&format!("/messages/search?q={}", long.replace(' ', "%20"))))
        .await
        .expect_error(400, "invalid_field");

    // Another team's token and the admin's find nothing here.
    let other = d.team("other").await;
    other
        .get("/v1/teams/qa/messages/search?q=average")
        .await
        .expect_error(404, "not_found");
    d.admin()
        .get("/v1/teams/qa/messages/search?q=average")
        .await
        .expect_error(403, "forbidden");
}
