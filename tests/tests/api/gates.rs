//! Human gates: a pending task held until a person answers, through the real API (SQLite, and
//! PostgreSQL with HUDDLE_TEST_BACKEND=postgres).

use huddle_tests::webhook_receiver::Receiver;
use huddle_tests::{eventually, TestDaemon};
use serde_json::json;

#[tokio::test]
async fn a_gated_task_is_claimed_only_after_a_person_answers() {
    let d = TestDaemon::start_with(|s| {
        s.webhooks.allow_private = true;
        s.webhooks.poll_ms = 20;
    })
    .await;
    let receiver = Receiver::start(&[]).await;
    let c = d.team("qa").await;
    c.post(
        &c.t("/webhooks"),
        json!({"url": receiver.url, "events": ["needs_human"]}),
    )
    .await
    .expect_status(201);
    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-001", "subject": "migrate the schema"}),
    )
    .await
    .expect_status(201);
    let gated = c
        .post(
            &c.t("/tasks/TEST-001/gate"),
            json!({"question": "May the tester drop the old table?\nIt holds 2 GB."}),
        )
        .await
        .expect_status(201)
        .body;
    let question = &gated["question"];
    let qid = question["id"].as_str().unwrap().to_string();
    assert!(qid.starts_with("HUMAN-"), "{gated}");
    assert_eq!(question["owner"], "human");
    assert_eq!(question["subject"], "May the tester drop the old table?");
    let gate = &question["metadata"]["gate"];
    assert_eq!(gate["for"], "TEST-001");
    assert_eq!(gate["askedBy"], "coordinator");
    // A plain question, as before kinds existed; bound to the task as it was when asked.
    assert_eq!(gate["kind"], "question");
    assert!(gate["taskHash"].is_string(), "{gate}");
    assert_eq!(gated["task"]["blockedBy"], json!([qid.clone()]));

    // No worker takes the task, nor the question; nobody completes the task by hand.
    let tester = d.agent("qa", "tester-1", "tester").await;
    assert!(tester.claim(json!({})).await.is_none());
    assert!(tester.claim(json!({"prefixes": ["HUMAN"]})).await.is_none());
    c.patch(&c.t("/tasks/TEST-001"), json!({"status": "completed"}))
        .await
        .expect_error(409, "blocked");
    let waiting = c
        .get(&c.t("/tasks?owner=human&status=pending"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(waiting["tasks"][0]["id"], qid.as_str());

    // The person is told, and answers.
    eventually(60, "the question reaches the webhook", || async {
        !receiver.received().is_empty()
    })
    .await;
    let told = &receiver.received()[0].body;
    assert_eq!(told["huddle"]["trigger"], "needs_human");
    assert_eq!(told["huddle"]["taskId"], qid.as_str());
    assert!(
        told["text"]
            .as_str()
            .unwrap()
            .contains("May the tester drop the old table?"),
        "{told}"
    );
    let answered = c
        .post(
            &c.t(&format!("/tasks/{qid}/answer")),
            json!({"answer": "Yes, after the backup."}),
        )
        .await
        .expect_status(200)
        .body;
    assert_eq!(answered["status"], "completed");
    assert_eq!(
        answered["result"],
        json!({"answer": "Yes, after the backup.", "answeredBy": "coordinator", "answeredAs": "coordinator"})
    );
    let claimed = tester
        .claim(json!({}))
        .await
        .expect("the task is ready once answered");
    assert_eq!(claimed["id"], "TEST-001", "{claimed}");
}

#[tokio::test]
async fn only_pending_tasks_are_gated_and_only_open_questions_answered() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    for id in ["TEST-001", "TEST-002", "TEST-003"] {
        c.post(&c.t("/tasks"), json!({"id": id, "subject": id}))
            .await
            .expect_status(201);
    }
    let tester = d.agent("qa", "tester-1", "tester").await;
    let claimed = tester.claim(json!({})).await.expect("claimed");
    let held = claimed["id"].as_str().unwrap().to_string();
    let ask = |id: &str| {
        (
            c.t(&format!("/tasks/{id}/gate")),
            json!({"question": "ok?"}),
        )
    };
    let (path, body) = ask(&held);
    c.post(&path, body)
        .await
        .expect_error(409, "invalid_transition");
    let (path, body) = ask("TEST-404");
    c.post(&path, body).await.expect_error(404, "not_found");
    let (path, _) = ask("TEST-003");
    c.post(&path, json!({"question": "   "}))
        .await
        .expect_error(400, "invalid_field");
    c.post(&path, json!({"question": "x".repeat(4_001)}))
        .await
        .expect_status(400);
    tester
        .post(&path, json!({"question": "ok?"}))
        .await
        .expect_error(403, "forbidden");
    c.patch(&c.t("/tasks/TEST-003"), json!({"status": "cancelled"}))
        .await
        .expect_status(200);
    c.post(&path, json!({"question": "ok?"}))
        .await
        .expect_error(409, "task_closed");
    // Nothing was half-written by the refusals: no question exists.
    let all = c
        .get(&c.t("/tasks?owner=human"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(all["tasks"], json!([]));

    let pending = if held == "TEST-001" {
        "TEST-002"
    } else {
        "TEST-001"
    };
    let (path, body) = ask(pending);
    let qid = c.post(&path, body).await.expect_status(201).body["question"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let answer = |id: &str| c.t(&format!("/tasks/{id}/answer"));
    c.post(&answer(pending), json!({"answer": "yes"}))
        .await
        .expect_error(409, "invalid_transition");
    c.post(&answer(&qid), json!({"answer": ""}))
        .await
        .expect_error(400, "invalid_field");
    tester
        .post(&answer(&qid), json!({"answer": "yes"}))
        .await
        .expect_error(403, "forbidden");
    c.post(&answer(&qid), json!({"answer": "yes"}))
        .await
        .expect_status(200);
    c.post(&answer(&qid), json!({"answer": "again"}))
        .await
        .expect_error(409, "task_closed");
    // The name questions are owned by is not an agent's to take.
    d.admin()
        .post(
            "/v1/teams/qa/agents",
            json!({"name": "human", "role": "tester"}),
        )
        .await
        .expect_error(400, "invalid_field");
}
