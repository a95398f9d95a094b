//! The message bus over real HTTP: idempotent posts, recipients, filters, inbox and ack.

use huddle_tests::TestDaemon;
use serde_json::json;

#[tokio::test]
async fn a_retried_post_with_the_same_key_is_stored_once() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let tester = d.agent("qa", "tester", "tester").await;
    let body = json!({"to": "coordinator", "type": "test_result", "summary": "96% passing", "data": {"passRate": 96.0, "iterations": 2}})
        .to_string()
        .into_bytes();
    let path = tester.t("/messages");
    let first = tester
        .send(
            reqwest::Method::POST,
            &path,
            Some(body.clone()),
            &[("Idempotency-Key", "run-42")],
        )
        .await
        .expect_status(201);
    let again = tester
        .send(
            reqwest::Method::POST,
            &path,
            Some(body),
            &[("Idempotency-Key", "run-42")],
        )
        .await
        .expect_status(201);
    assert_eq!(first.body, again.body);
    assert_eq!(again.headers["idempotent-replayed"], "true");
    assert_eq!(
        first.body["from"], "tester",
        "from is the caller's identity"
    );
    let all = c.get(&c.t("/messages")).await.expect_status(200);
    assert_eq!(all.body["messages"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_message_to_nobody_is_refused_listing_who_can_be_reached() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    d.agent("qa", "tester-1", "tester").await;
    let r = c
        .post(
            &c.t("/messages"),
            json!({"to": "testr", "type": "fix_required", "summary": "x"}),
        )
        .await;
    let r = r.expect_error(400, "invalid_field");
    let known = r.body["error"]["details"]["knownRecipients"]
        .as_array()
        .unwrap()
        .clone();
    for name in [
        "coordinator",
        "tester-1",
        "tester",
        "executor",
        "observer",
        "*",
    ] {
        assert!(
            known.contains(&json!(name)),
            "{name} missing from {known:?}"
        );
    }
    c.post(
        &c.t("/messages"),
        json!({"to": "tester-1", "type": "fix_required", "summary": "x"}),
    )
    .await
    .expect_status(201);
    c.post(
        &c.t("/messages"),
        json!({"to": "tester", "type": "custom_note", "summary": "x"}),
    )
    .await
    .expect_status(201);
    c.post(
        &c.t("/messages"),
        json!({"to": "*", "type": "Bad-Type", "summary": "x"}),
    )
    .await
    .expect_error(400, "invalid_field");
}

#[tokio::test]
async fn messages_list_with_filters_and_cursors() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let t = d.agent("qa", "tester", "tester").await;
    for i in 0..5 {
        t.post(
            &t.t("/messages"),
            json!({"to": "coordinator", "type": "impl_progress", "summary": format!("step {i}")}),
        )
        .await
        .expect_status(201);
    }
    c.post(
        &c.t("/messages"),
        json!({"to": "tester", "type": "fix_required", "summary": "please"}),
    )
    .await
    .expect_status(201);
    let page = c.get(&c.t("/messages?limit=2")).await.expect_status(200);
    assert_eq!(page.body["next"], 2);
    let rest = c
        .get(&c.t("/messages?after=2&limit=100"))
        .await
        .expect_status(200);
    let seqs: Vec<_> = rest.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["seq"].as_i64().unwrap())
        .collect();
    assert_eq!(seqs, [3, 4, 5, 6]);
    assert!(rest.body["next"].is_null());
    let from = c
        .get(&c.t("/messages?from=coordinator"))
        .await
        .expect_status(200);
    assert_eq!(from.body["messages"].as_array().unwrap().len(), 1);
    let typed = c
        .get(&c.t("/messages?type=impl_progress&to=coordinator"))
        .await
        .expect_status(200);
    assert_eq!(typed.body["messages"].as_array().unwrap().len(), 5);
}

#[tokio::test]
async fn the_inbox_keeps_a_cursor_that_only_ack_moves_and_long_polls() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let t = d.agent("qa", "tester", "tester").await;
    c.post(
        &c.t("/messages"),
        json!({"to": "tester", "type": "fix_required", "summary": "one"}),
    )
    .await
    .expect_status(201);
    c.post(
        &c.t("/messages"),
        json!({"to": "executor", "type": "fix_required", "summary": "not mine"}),
    )
    .await
    .expect_status(201);
    c.post(
        &c.t("/messages"),
        json!({"to": "*", "type": "impl_progress", "summary": "all"}),
    )
    .await
    .expect_status(201);
    let inbox = t.get(&t.t("/inbox")).await.expect_status(200);
    let seqs: Vec<_> = inbox.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["seq"].as_i64().unwrap())
        .collect();
    assert_eq!(seqs, [1, 3]);
    assert_eq!(
        t.get(&t.t("/inbox")).await.body["messages"]
            .as_array()
            .unwrap()
            .len(),
        2,
        "reading does not acknowledge"
    );
    assert_eq!(
        t.post(&t.t("/inbox/ack"), json!({"seq": 3}))
            .await
            .expect_status(200)
            .body["cursor"],
        3
    );
    t.post(&t.t("/inbox/ack"), json!({"seq": 99}))
        .await
        .expect_error(400, "invalid_field");

    let waiting = t.clone();
    let parked = tokio::spawn(async move { waiting.get(&waiting.t("/inbox?waitMs=30000")).await });
    c.post(
        &c.t("/messages"),
        json!({"to": "tester", "type": "fix_required", "summary": "late"}),
    )
    .await
    .expect_status(201);
    let woke = tokio::time::timeout(std::time::Duration::from_secs(20), parked)
        .await
        .expect("woken by the post")
        .unwrap();
    assert_eq!(woke.body["messages"][0]["summary"], "late");
}

#[tokio::test]
async fn a_batched_post_stores_every_message_in_order_or_none() {
    let d = TestDaemon::start_with(|s| s.limits.max_batch = 3).await;
    let c = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    let batch = |items: serde_json::Value| json!({ "messages": items });
    let posted = tester
        .post(
            &tester.t("/messages/batch"),
            batch(json!([
                {"to": "coordinator", "type": "test_result", "summary": "a", "data": {"n": 1}, "idempotencyKey": "run-7/a"},
                {"to": "*", "type": "impl_progress", "summary": "b"},
                {"to": "executor", "type": "fix_required", "summary": "c"},
            ])),
        )
        .await
        .expect_status(201);
    let seqs: Vec<_> = posted.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["seq"].as_i64().unwrap(),
                m["summary"].clone(),
                m["from"].clone(),
            )
        })
        .collect();
    assert_eq!(
        seqs,
        [
            (1, json!("a"), json!("tester-1")),
            (2, json!("b"), json!("tester-1")),
            (3, json!("c"), json!("tester-1"))
        ]
    );
    assert_eq!(posted.body["messages"][0]["data"], json!({"n": 1}));
    assert!(posted.body.get("replayed").is_none(), "{}", posted.body);

    // A retried item (same key) answers the stored message; a key repeated inside one batch
    // stores the message once.
    let again = tester
        .post(
            &tester.t("/messages/batch"),
            batch(json!([
                {"to": "coordinator", "type": "test_result", "summary": "a", "data": {"n": 1}, "idempotencyKey": "run-7/a"},
                {"to": "*", "type": "impl_progress", "summary": "d", "idempotencyKey": "run-7/d"},
                {"to": "*", "type": "impl_progress", "summary": "d", "idempotencyKey": "run-7/d"},
            ])),
        )
        .await
        .expect_status(201);
    assert_eq!(again.body["replayed"], json!([0, 2]));
    assert_eq!(again.body["messages"][0], posted.body["messages"][0]);
    assert_eq!(again.body["messages"][1]["seq"], 4);
    assert_eq!(again.body["messages"][2], again.body["messages"][1]);

    // One refused item refuses the batch, naming it; nothing is stored.
    let refused = tester
        .post(
            &tester.t("/messages/batch"),
            batch(json!([
                {"to": "*", "type": "impl_progress", "summary": "e"},
                {"to": "ghost", "type": "error", "summary": "f"},
            ])),
        )
        .await
        .expect_error(400, "invalid_field");
    assert_eq!(
        refused.body["error"]["details"]["field"], "messages[1].to",
        "{}",
        refused.body
    );
    assert!(refused.body["error"]["details"]["knownRecipients"].is_array());
    let too_many = tester
        .post(
            &tester.t("/messages/batch"),
            batch(json!(vec![
                json!({"to": "*", "type": "e", "summary": "1"});
                4
            ])),
        )
        .await
        .expect_error(400, "invalid_field");
    assert!(
        too_many.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1 to 3 items"),
        "{}",
        too_many.body
    );
    let all = c.get(&c.t("/messages")).await.expect_status(200);
    let summaries: Vec<_> = all.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["summary"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(summaries, ["a", "b", "c", "d"]);

    // Observers may not post, in batches either.
    let observer = d.agent("qa", "watcher", "observer").await;
    let refused = observer
        .post(
            &observer.t("/messages/batch"),
            batch(json!([{"to": "*", "type": "e", "summary": "1"}])),
        )
        .await
        .expect_error(403, "forbidden");
    assert_eq!(
        refused.body["error"]["message"],
        "an observer may not post messages"
    );
}

/// `newest=true` answers "the last N" that match, oldest first, with a cursor for what follows;
/// it takes no `after`. The same over MCP's `msg_list`.
#[tokio::test]
async fn newest_lists_the_last_messages_that_match() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    for i in 1..=30 {
        let kind = if i % 3 == 0 { "fix_required" } else { "note" };
        c.post(
            &c.t("/messages"),
            json!({"to": "*", "type": kind, "summary": format!("m{i}")}),
        )
        .await
        .expect_status(201);
    }
    let page = c
        .get(&c.t("/messages?type=fix_required&limit=3&newest=true"))
        .await
        .expect_status(200)
        .body;
    let summaries: Vec<&str> = page["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["summary"].as_str().unwrap())
        .collect();
    assert_eq!(summaries, ["m24", "m27", "m30"], "{page}");
    let last = page["messages"][2]["seq"].clone();
    assert_eq!(page["next"], last);
    let later = c
        .get(&c.t(&format!("/messages?after={last}")))
        .await
        .expect_status(200)
        .body;
    assert!(later["messages"].as_array().unwrap().is_empty(), "{later}");
    // With `after`, the newest of those past it: here the last 3 are all past seq 3.
    let past = c
        .get(&c.t(&format!(
            "/messages?type=fix_required&newest=true&limit=5&after={}",
            page["messages"][1]["seq"]
        )))
        .await
        .expect_status(200)
        .body;
    assert_eq!(past["messages"].as_array().unwrap().len(), 1, "{past}");
    assert_eq!(past["messages"][0]["summary"], "m30");
    let oldest = c
        .get(&c.t("/messages?type=fix_required&limit=1"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(oldest["messages"][0]["summary"], "m3");
}
