//! Gates only a person decides (`personOnly`): a lead's token decides; a coordinator is refused
//! with `person_required` whichever way it tries around the gate (answering, editing or
//! cancelling the question, dropping it from the blockers, forcing the task complete, editing
//! the task and asking again without the flag, minting itself a lead). Real API (SQLite, and
//! PostgreSQL with HUDDLE_TEST_BACKEND=postgres).

use huddle_tests::http::Api;
use huddle_tests::TestDaemon;
use serde_json::{json, Value};

use super::gate_support::id_of;

async fn gate(c: &Api, id: &str, body: Value) -> Value {
    c.post(&c.t(&format!("/tasks/{id}/gate")), body)
        .await
        .expect_status(201)
        .body
}

#[tokio::test]
async fn only_a_leads_token_decides_a_person_only_gate() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let lead = d.agent("qa", "dana", "lead").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-001", "subject": "edit calc.py"}),
    )
    .await
    .expect_status(201);
    let gated = gate(
        &c,
        "TEST-001",
        json!({"question": "May the tester change calc.py?", "kind": "approval", "personOnly": true}),
    )
    .await;
    let qid = id_of(&gated["question"]);
    assert_eq!(gated["question"]["metadata"]["gate"]["personOnly"], true);
    let read = c.get(&c.t("/tasks/TEST-001")).await.expect_status(200).body;
    assert_eq!(read["gates"][0]["personOnly"], true, "{read}");

    let refused = c
        .post(
            &c.t(&format!("/tasks/{qid}/answer")),
            json!({"decision": "approve"}),
        )
        .await
        .expect_error(403, "person_required");
    assert!(
        refused.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("lead"),
        "{}",
        refused.body
    );
    tester
        .post(
            &c.t(&format!("/tasks/{qid}/answer")),
            json!({"decision": "approve"}),
        )
        .await
        .expect_error(403, "forbidden");
    assert!(tester.claim(json!({})).await.is_none(), "still held");

    let q = lead
        .post(
            &c.t(&format!("/tasks/{qid}/answer")),
            json!({"decision": "approve", "answer": "Yes, after the freeze."}),
        )
        .await
        .expect_status(200)
        .body;
    assert_eq!(q["result"]["answeredBy"], "dana");
    assert_eq!(q["result"]["answeredAs"], "lead");
    let claimed = tester.claim(json!({})).await.expect("released by the lead");
    assert_eq!(claimed["id"], "TEST-001");
    assert_eq!(claimed["gates"][0]["answeredBy"], "dana");
    assert_eq!(claimed["gates"][0]["personOnly"], true);

    // A plain gate is still decided by a coordinator, and a lead may decide one too.
    c.post(&c.t("/tasks"), json!({"id": "TEST-002", "subject": "x"}))
        .await
        .expect_status(201);
    let q2 = id_of(&gate(&c, "TEST-002", json!({"question": "Which db?"})).await["question"]);
    c.post(
        &c.t(&format!("/tasks/{q2}/answer")),
        json!({"answer": "postgres"}),
    )
    .await
    .expect_status(200);

    // Created gated in one step, person-only from the start.
    let created = c
        .post(
            &c.t("/tasks"),
            json!({"id": "TEST-003", "subject": "y",
                   "gate": {"question": "Ship it?", "kind": "approval", "personOnly": true}}),
        )
        .await
        .expect_status(201)
        .body;
    let q3 = created["blockedBy"][0].as_str().unwrap().to_string();
    c.post(
        &c.t(&format!("/tasks/{q3}/answer")),
        json!({"decision": "reject", "answer": "no"}),
    )
    .await
    .expect_error(403, "person_required");
    lead.post(
        &c.t(&format!("/tasks/{q3}/answer")),
        json!({"decision": "reject", "answer": "Not this week."}),
    )
    .await
    .expect_status(200);
    let rejected = c.get(&c.t("/tasks/TEST-003")).await.expect_status(200).body;
    assert_eq!(rejected["status"], "cancelled");
    assert_eq!(rejected["failureReason"], "Not this week.");
}

#[tokio::test]
async fn a_coordinator_finds_no_way_around_a_person_only_gate() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-001", "subject": "edit calc.py"}),
    )
    .await
    .expect_status(201);
    let first = gate(
        &c,
        "TEST-001",
        json!({"question": "May it?", "kind": "approval", "personOnly": true}),
    )
    .await;
    let q1 = id_of(&first["question"]);

    // The question is answered, not edited: no completing, cancelling or rewriting it.
    for patch in [
        json!({"status": "completed"}),
        json!({"status": "cancelled"}),
        json!({"metadata": {"gate": {"for": "TEST-001", "personOnly": false}}}),
        json!({"owner": "coordinator"}),
    ] {
        c.patch(&c.t(&format!("/tasks/{q1}")), patch.clone())
            .await
            .expect_error(403, "person_required");
    }
    // Nor dropped from the blockers, nor the task forced complete past it.
    c.patch(
        &c.t("/tasks/TEST-001"),
        json!({"removeBlockedBy": [q1.clone()]}),
    )
    .await
    .expect_error(403, "person_required");
    c.patch(
        &c.t("/tasks/TEST-001"),
        json!({"status": "completed", "force": true}),
    )
    .await
    .expect_error(403, "person_required");

    // Nor asked again with a deadline that approves: the task's state refuses it (409).
    let approve_later = (chrono::Utc::now() + chrono::Duration::hours(1))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    c.post(
        &c.t("/tasks/TEST-001/gate"),
        json!({"question": "ok by noon?", "deadline": approve_later, "onDeadline": "approve"}),
    )
    .await
    .expect_error(409, "invalid_transition");

    // Editing the task and asking again without the flag keeps the gate a person's.
    c.patch(
        &c.t("/tasks/TEST-001"),
        json!({"subject": "edit calc.py gently"}),
    )
    .await
    .expect_status(200);
    let again = gate(
        &c,
        "TEST-001",
        json!({"question": "May it now?", "kind": "approval"}),
    )
    .await;
    let q2 = id_of(&again["question"]);
    assert_eq!(again["question"]["metadata"]["gate"]["personOnly"], true);
    assert!(
        !again["task"]["blockedBy"]
            .as_array()
            .unwrap()
            .contains(&json!(q1)),
        "the stale question is withdrawn: {}",
        again["task"]
    );
    c.post(
        &c.t(&format!("/tasks/{q2}/answer")),
        json!({"decision": "approve"}),
    )
    .await
    .expect_error(403, "person_required");

    // No minting a lead: only the admin token or a lead adds, rotates or revokes one.
    c.post(&c.t("/agents"), json!({"name": "me-too", "role": "lead"}))
        .await
        .expect_error(403, "forbidden");
    let lead = d.agent("qa", "dana", "lead").await;
    c.post(&c.t("/agents/dana/rotate"), json!({}))
        .await
        .expect_error(403, "forbidden");
    c.post(&c.t("/agents/dana/revoke"), json!({}))
        .await
        .expect_error(403, "forbidden");
    lead.post(&c.t("/agents"), json!({"name": "sam", "role": "lead"}))
        .await
        .expect_status(201);
    // A coordinator still manages the other roles.
    c.post(
        &c.t("/agents"),
        json!({"name": "tester-2", "role": "tester"}),
    )
    .await
    .expect_status(201);

    assert!(tester.claim(json!({})).await.is_none(), "never released");
    let task = c.get(&c.t("/tasks/TEST-001")).await.expect_status(200).body;
    assert_eq!(task["status"], "pending", "{task}");

    // The lead may do all of it: here, drop the gate by hand.
    lead.patch(
        &c.t("/tasks/TEST-001"),
        json!({"removeBlockedBy": [q2.clone()]}),
    )
    .await
    .expect_status(200);
    assert_eq!(
        tester.claim(json!({})).await.expect("released")["id"],
        "TEST-001"
    );
}
