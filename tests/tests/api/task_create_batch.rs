//! A batch of new tasks answers, records and reads back as the same tasks. Batches without
//! edges build their answer and their `task.created` events from what they inserted, without
//! reading the rows back (it keeps a 1,000-task batch short on the SQLite writer); batches
//! with edges read them back. Both must give exactly what a later read gives, on every backend.

use huddle_tests::sse::SseReader;
use huddle_tests::{Api, TestDaemon};
use serde_json::{json, Value};

/// Every field a new task can set, and explicit ids mixed with numbered ones.
fn mixed_batch() -> Value {
    json!([
        {"prefix": "TEST", "subject": "numbered"},
        {"id": "TEST-007", "subject": "explicit", "description": "d", "activeForm": "testing",
         "owner": "tester", "maxAttempts": 5, "metadata": {"project": "calc", "n": [1, 2.5, "x"]}},
        {"prefix": "TEST", "subject": "after the explicit one"},
        {"prefix": "IMPL", "subject": "other prefix", "owner": "", "metadata": {"tags": {"b": 1, "a": null}}},
        {"prefix": "TEST", "subject": "last", "metadata": {}}
    ])
}

async fn create(c: &Api, batch: Value) -> Vec<Value> {
    let created = c.post(&c.t("/tasks"), batch).await.expect_status(201).body;
    created.as_array().expect("an array of tasks").clone()
}

/// Each created task equals a read of it, and its `task.created` event (replayed from the
/// start of the stream) carries exactly it.
async fn assert_answer_read_and_events_agree(d: &TestDaemon, c: &Api, created: &[Value]) {
    for task in created {
        let id = task["id"].as_str().expect("id");
        let read = c
            .get(&c.t(&format!("/tasks/{id}")))
            .await
            .expect_status(200)
            .body;
        assert_eq!(&read, task, "the answer and a later read of {id}");
    }
    let url = format!("{}{}?type=task.created", d.url, c.t("/events"));
    let mut stream = SseReader::open(&url, &c.token, None).await;
    let events = stream.take(created.len()).await;
    for (task, (_, kind, event)) in created.iter().zip(&events) {
        assert_eq!(kind, "task.created");
        assert_eq!(&event["data"], task, "the event and the answer");
    }
}

#[tokio::test]
async fn a_batch_without_edges_answers_and_records_what_a_read_returns() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    d.agent("qa", "tester", "tester").await;
    let created = create(&c, mixed_batch()).await;
    let ids: Vec<&str> = created.iter().map(|t| t["id"].as_str().unwrap()).collect();
    // The counter moves past an explicit id within the batch, per prefix.
    assert_eq!(
        ids,
        ["TEST-001", "TEST-007", "TEST-008", "IMPL-001", "TEST-009"]
    );
    assert_eq!(
        created[3]["owner"],
        Value::Null,
        "an empty owner is no owner"
    );
    assert_answer_read_and_events_agree(&d, &c, &created).await;
    // The next batch goes on from the counters the first one saved.
    let next = create(
        &c,
        json!([{"prefix": "TEST", "subject": "a"}, {"prefix": "IMPL", "subject": "b"}]),
    )
    .await;
    assert_eq!(next[0]["id"], "TEST-010");
    assert_eq!(next[1]["id"], "IMPL-002");
    // An explicit id below the counter leaves it where it was.
    create(&c, json!([{"id": "TEST-003", "subject": "c"}])).await;
    let after = create(&c, json!([{"prefix": "TEST", "subject": "d"}])).await;
    assert_eq!(after[0]["id"], "TEST-011");
}

#[tokio::test]
async fn a_batch_with_edges_answers_and_records_what_a_read_returns() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let created = create(
        &c,
        json!([
            {"id": "TEST-001", "subject": "first"},
            {"id": "TEST-002", "subject": "second", "blockedBy": ["TEST-001"]},
            {"prefix": "TEST", "subject": "third", "blockedBy": ["TEST-001", "TEST-002"]}
        ]),
    )
    .await;
    assert_eq!(created[0]["blocks"], json!(["TEST-002", "TEST-003"]));
    assert_eq!(created[2]["blockedBy"], json!(["TEST-001", "TEST-002"]));
    assert_answer_read_and_events_agree(&d, &c, &created).await;
}

#[tokio::test]
async fn a_refused_task_leaves_no_task_and_no_counter_of_its_batch() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    c.post(
        &c.t("/tasks"),
        json!([{"prefix": "TEST", "subject": "a"}, {"id": "TEST-001", "subject": "taken"}]),
    )
    .await
    .expect_status(409);
    let listed = c.get(&c.t("/tasks")).await.expect_status(200).body;
    assert_eq!(listed["tasks"], json!([]), "{listed}");
    let created = create(&c, json!([{"prefix": "TEST", "subject": "b"}])).await;
    assert_eq!(created[0]["id"], "TEST-001");
}
