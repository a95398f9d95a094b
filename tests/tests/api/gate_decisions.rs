//! Gates that ask for a decision: approve releases, reject cancels; a decision is bound to the
//! task as it was asked; a cancelled task withdraws its question; a task created gated is
//! never claimed first; the claim carries the decisions. Real API (SQLite, and PostgreSQL
//! with HUDDLE_TEST_BACKEND=postgres).

use huddle_tests::http::Api;
use huddle_tests::webhook_receiver::Receiver;
use huddle_tests::{eventually, TestDaemon};
use serde_json::{json, Value};
use std::time::Duration;

async fn task(c: &Api, id: &str, description: &str) {
    c.post(
        &c.t("/tasks"),
        json!({"id": id, "subject": format!("change {id}"), "description": description}),
    )
    .await
    .expect_status(201);
}

/// Gates `id` for approval; returns the question's id.
async fn ask_approval(c: &Api, id: &str, question: &str) -> String {
    let gated = c
        .post(
            &c.t(&format!("/tasks/{id}/gate")),
            json!({"question": question, "kind": "approval"}),
        )
        .await
        .expect_status(201)
        .body;
    assert_eq!(gated["question"]["metadata"]["gate"]["kind"], "approval");
    gated["question"]["id"].as_str().unwrap().to_string()
}

async fn answer(c: &Api, qid: &str, body: Value) -> huddle_tests::http::Reply {
    c.post(&c.t(&format!("/tasks/{qid}/answer")), body).await
}

#[tokio::test]
async fn rejecting_cancels_the_task_with_the_reason_and_tells_the_coordinators() {
    let d = TestDaemon::start_with(|s| {
        s.webhooks.allow_private = true;
        s.webhooks.poll_ms = 20;
    })
    .await;
    let receiver = Receiver::start(&[]).await;
    let c = d.team("qa").await;
    c.post(
        &c.t("/webhooks"),
        json!({"url": receiver.url, "events": ["gate_rejected"]}),
    )
    .await
    .expect_status(201);
    let tester = d.agent("qa", "tester-1", "tester").await;
    task(&c, "TEST-001", "edit calc.py").await;
    task(&c, "TEST-002", "edit billing.py").await;
    let q1 = ask_approval(&c, "TEST-001", "May the tester change calc.py?").await;
    let q2 = ask_approval(&c, "TEST-002", "May the tester change billing.py?").await;

    // An approval gate wants a decision, not words alone.
    let refused = answer(&c, &q1, json!({"answer": "No, do not ship."}))
        .await
        .expect_error(400, "invalid_field");
    assert!(
        refused.body.to_string().contains("decision"),
        "{}",
        refused.body
    );
    answer(&c, &q1, json!({"decision": "maybe"}))
        .await
        .expect_status(400);

    let reason = "No, do not ship. Billing freezes this week; leave calc.py alone.";
    let q = answer(&c, &q1, json!({"decision": "reject", "answer": reason}))
        .await
        .expect_status(200)
        .body;
    assert_eq!(q["status"], "completed");
    assert_eq!(
        q["result"],
        json!({"decision": "reject", "answer": reason, "answeredBy": "coordinator", "answeredAs": "coordinator"})
    );
    let t = c.get(&c.t("/tasks/TEST-001")).await.expect_status(200).body;
    assert_eq!(t["status"], "cancelled", "{t}");
    assert_eq!(t["failureReason"], reason);
    assert_eq!(t["gates"][0]["decision"], "reject", "{t}");
    // Without words, the reason names the question.
    answer(&c, &q2, json!({"decision": "reject"}))
        .await
        .expect_status(200);
    let t2 = c.get(&c.t("/tasks/TEST-002")).await.expect_status(200).body;
    assert_eq!(t2["status"], "cancelled");
    assert_eq!(t2["failureReason"], format!("rejected at {q2}"));

    // Never claimable, and a second decision is refused.
    assert!(tester.claim(json!({})).await.is_none());
    let reopen = c
        .patch(&c.t("/tasks/TEST-001"), json!({"status": "pending"}))
        .await
        .expect_error(409, "invalid_transition");
    assert!(
        reopen.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("rejected at {q1}")),
        "{}",
        reopen.body
    );
    assert!(tester.claim(json!({})).await.is_none());
    answer(&c, &q1, json!({"decision": "approve"}))
        .await
        .expect_error(409, "task_closed");

    let told = c
        .get(&c.t("/messages?type=gate_rejected"))
        .await
        .expect_status(200)
        .body;
    let told = told["messages"].as_array().unwrap();
    assert_eq!(told.len(), 2, "{told:?}");
    assert_eq!(told[0]["to"], "coordinator");
    assert_eq!(told[0]["data"]["task"], "TEST-001");
    assert_eq!(told[0]["data"]["question"], q1.as_str());
    assert!(told[0]["summary"].as_str().unwrap().contains(reason));

    // A person hears of it too, with the reason, through a webhook on `gate_rejected`.
    eventually(60, "both rejections reach the webhook", || async {
        receiver.received().len() == 2
    })
    .await;
    let sent = &receiver.received()[0].body;
    assert_eq!(sent["huddle"]["trigger"], "gate_rejected", "{sent}");
    assert_eq!(sent["huddle"]["taskId"], "TEST-001");
    assert!(sent["text"].as_str().unwrap().contains(reason), "{sent}");
}

#[tokio::test]
async fn approving_releases_the_task_and_the_claim_carries_the_decision() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    task(&c, "TEST-001", "drop the old table").await;
    let qid = ask_approval(&c, "TEST-001", "May the tester drop the old table?").await;
    let open = c.get(&c.t("/tasks/TEST-001")).await.expect_status(200).body;
    assert_eq!(open["gates"][0]["status"], "open", "{open}");
    assert_eq!(open["gates"][0]["decision"], Value::Null);
    assert!(tester.claim(json!({})).await.is_none());

    answer(
        &c,
        &qid,
        json!({"decision": "approve", "answer": "Yes, after the backup."}),
    )
    .await
    .expect_status(200);
    let claimed = tester.claim(json!({})).await.expect("released");
    assert_eq!(claimed["id"], "TEST-001");
    let gates = claimed["gates"]
        .as_array()
        .expect("the claim carries gates");
    assert_eq!(gates.len(), 1, "{claimed}");
    let g = &gates[0];
    assert_eq!(g["id"], qid.as_str());
    assert_eq!(g["question"], "May the tester drop the old table?");
    assert_eq!(g["kind"], "approval");
    assert_eq!(g["status"], "answered");
    assert_eq!(g["decision"], "approve");
    assert_eq!(g["answer"], "Yes, after the backup.");
    assert_eq!(g["answeredBy"], "coordinator");
    assert!(g["answeredAt"].is_string(), "{g}");

    // A question gate still takes words alone, and a task never gated carries no `gates`.
    task(&c, "TEST-002", "x").await;
    let q = c
        .post(
            &c.t("/tasks/TEST-002/gate"),
            json!({"question": "Which db?"}),
        )
        .await
        .expect_status(201)
        .body["question"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    answer(&c, &q, json!({"answer": "postgres"}))
        .await
        .expect_status(200);
    let claimed = tester.claim(json!({})).await.expect("released");
    assert_eq!(claimed["gates"][0]["answer"], "postgres", "{claimed}");
    assert_eq!(claimed["gates"][0]["decision"], Value::Null);
    task(&c, "TEST-003", "x").await;
    let plain = tester.claim(json!({})).await.expect("ungated");
    assert!(plain.get("gates").is_none(), "{plain}");
}

#[tokio::test]
async fn an_edit_after_asking_refuses_the_decision_until_asked_again() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    task(&c, "TEST-001", "change calc.py").await;
    let first = ask_approval(&c, "TEST-001", "May the tester change calc.py?").await;
    // Who may take it is not what was asked about.
    c.patch(&c.t("/tasks/TEST-001"), json!({"owner": "tester"}))
        .await
        .expect_status(200);
    c.patch(
        &c.t("/tasks/TEST-001"),
        json!({"description": "change calc.py and billing.py"}),
    )
    .await
    .expect_status(200);
    let refused = answer(&c, &first, json!({"decision": "approve"}))
        .await
        .expect_error(409, "invalid_transition");
    let message = refused.body["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.contains(&format!("TEST-001 changed since {first} was asked")),
        "{}",
        refused.body
    );
    for edit in [
        json!({"subject": "other"}),
        json!({"metadata": {"area": "all"}}),
    ] {
        c.patch(&c.t("/tasks/TEST-001"), edit)
            .await
            .expect_status(200);
        answer(&c, &first, json!({"decision": "reject"}))
            .await
            .expect_error(409, "invalid_transition");
    }

    // Asked again: the stale question is withdrawn, the new one decides.
    let again = ask_approval(&c, "TEST-001", "May the tester change both files?").await;
    let old = c
        .get(&c.t(&format!("/tasks/{first}")))
        .await
        .expect_status(200)
        .body;
    assert_eq!(old["status"], "cancelled");
    assert!(
        old["failureReason"]
            .as_str()
            .unwrap()
            .starts_with("withdrawn"),
        "{old}"
    );
    answer(&c, &first, json!({"decision": "approve"}))
        .await
        .expect_error(409, "invalid_transition");
    answer(&c, &again, json!({"decision": "approve"}))
        .await
        .expect_status(200);
    let claimed = tester.claim(json!({})).await.expect("released");
    assert_eq!(claimed["id"], "TEST-001");
    assert_eq!(claimed["blockedBy"], json!([again.clone()]));
    assert_eq!(claimed["gates"][0]["id"], again.as_str());
}

#[tokio::test]
async fn cancelling_a_gated_task_withdraws_its_question() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    task(&c, "TEST-003", "x").await;
    let qid = ask_approval(&c, "TEST-003", "May we?").await;
    c.patch(&c.t("/tasks/TEST-003"), json!({"status": "cancelled"}))
        .await
        .expect_status(200);
    let q = c
        .get(&c.t(&format!("/tasks/{qid}")))
        .await
        .expect_status(200)
        .body;
    assert_eq!(q["status"], "cancelled");
    assert_eq!(q["failureReason"], "withdrawn: TEST-003 was cancelled");
    let waiting = c
        .get(&c.t("/tasks?owner=human&status=pending"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(waiting["tasks"], json!([]));
    let t = c.get(&c.t("/tasks/TEST-003")).await.expect_status(200).body;
    assert_eq!(t["gates"][0]["status"], "withdrawn", "{t}");
    for body in [
        json!({"decision": "approve"}),
        json!({"decision": "approve", "answer": "yes"}),
    ] {
        let refused = answer(&c, &qid, body)
            .await
            .expect_error(409, "invalid_transition");
        assert!(
            refused.body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("withdrawn"),
            "{}",
            refused.body
        );
    }
}

#[tokio::test]
async fn a_task_created_gated_is_never_claimed_by_a_waiting_worker() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    let waiter = tester.clone();
    let waiting = tokio::spawn(async move { waiter.claim(json!({"waitMs": 1500})).await });
    // Let the claim start waiting before the task exists.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let created = c
        .post(
            &c.t("/tasks"),
            json!({"id": "TEST-001", "subject": "migrate",
                   "gate": {"question": "May it run tonight?", "kind": "approval"}}),
        )
        .await
        .expect_status(201)
        .body;
    let blocked_by = created["blockedBy"].as_array().expect("gated").clone();
    assert_eq!(blocked_by.len(), 1, "{created}");
    let qid = blocked_by[0].as_str().unwrap().to_string();
    assert!(qid.starts_with("HUMAN-"));
    assert_eq!(
        waiting.await.unwrap(),
        None,
        "the waiting worker must not get a task created gated"
    );

    // A batch gates each of its tasks the same way.
    let batch = c
        .post(
            &c.t("/tasks"),
            json!([{"id": "TEST-002", "subject": "a", "gate": {"question": "ok?"}},
                   {"id": "TEST-003", "subject": "b"}]),
        )
        .await
        .expect_status(201)
        .body;
    assert_eq!(
        batch[0]["blockedBy"].as_array().unwrap().len(),
        1,
        "{batch}"
    );
    assert_eq!(batch[1]["blockedBy"], json!([]));
    let claimed = tester.claim(json!({})).await.expect("the ungated one");
    assert_eq!(claimed["id"], "TEST-003");
    assert!(tester.claim(json!({})).await.is_none());
    answer(&c, &qid, json!({"decision": "approve"}))
        .await
        .expect_status(200);
    let claimed = tester.claim(json!({})).await.expect("approved");
    assert_eq!(claimed["id"], "TEST-001");
    assert_eq!(claimed["gates"][0]["decision"], "approve");
}
