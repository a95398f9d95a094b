//! Stop and start the daemon on the same data directory: everything acknowledged is there, and
//! sequences continue where they left off.

use huddle_tests::TestDaemon;
use serde_json::json;

#[tokio::test]
async fn everything_acknowledged_survives_a_restart() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let t = d.agent("qa", "tester", "tester").await;
    c.post(&c.t("/tasks"), json!([{"id": "TEST-001", "subject": "a"}, {"id": "TEST-002", "subject": "b", "blockedBy": ["TEST-001"]}]))
        .await
        .expect_status(201);
    t.claim(json!({})).await.unwrap();
    t.post(
        &t.t("/tasks/TEST-001/complete"),
        json!({"result": {"passed": 10}}),
    )
    .await
    .expect_status(200);
    let msg = t
        .send(
            reqwest::Method::POST,
            &t.t("/messages"),
            Some(
                json!({"to": "coordinator", "type": "test_result", "summary": "green"})
                    .to_string()
                    .into_bytes(),
            ),
            &[("Idempotency-Key", "k-1")],
        )
        .await
        .expect_status(201);
    c.post(&c.t("/inbox/ack"), json!({"seq": 1}))
        .await
        .expect_status(200);
    c.patch(
        &c.t("/memory"),
        json!({"execution_results": {"pass_rate": 100}}),
    )
    .await
    .expect_status(200);
    let events_before = c.get(&c.t("/messages")).await.body;

    let d = d.restart().await;
    let c = huddle_tests::Api::new(&d.url, &c.token).in_team("qa");
    let t = huddle_tests::Api::new(&d.url, &t.token).in_team("qa");
    let done = c.get(&c.t("/tasks/TEST-001")).await.expect_status(200);
    assert_eq!(
        (done.body["status"].as_str(), &done.body["result"]),
        (Some("completed"), &json!({"passed": 10}))
    );
    assert_eq!(
        c.get(&c.t("/tasks?ready=true")).await.body["tasks"][0]["id"],
        "TEST-002"
    );
    assert_eq!(c.get(&c.t("/messages")).await.body, events_before);
    assert!(
        c.get(&c.t("/inbox")).await.body["messages"]
            .as_array()
            .unwrap()
            .is_empty(),
        "the ack survived"
    );
    assert_eq!(
        c.get(&c.t("/memory")).await.body["doc"]["execution_results"]["pass_rate"],
        100
    );
    // The idempotency key still answers with the original message.
    let again = t
        .send(
            reqwest::Method::POST,
            &t.t("/messages"),
            Some(
                json!({"to": "coordinator", "type": "test_result", "summary": "green"})
                    .to_string()
                    .into_bytes(),
            ),
            &[("Idempotency-Key", "k-1")],
        )
        .await
        .expect_status(201);
    assert_eq!(again.body, msg.body);
    // Sequences continue.
    let next = t
        .post(
            &t.t("/messages"),
            json!({"to": "*", "type": "impl_progress", "summary": "after"}),
        )
        .await
        .expect_status(201);
    assert_eq!(next.body["seq"], 2);
    let auto = c
        .post(&c.t("/tasks"), json!({"prefix": "TEST", "subject": "c"}))
        .await
        .expect_status(201);
    assert_eq!(auto.body["id"], "TEST-003");
    // The database file is whole.
    let conn = rusqlite::Connection::open(d.data_dir.join("huddle.db")).unwrap();
    let ok: String = conn
        .query_row("pragma integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
}
