//! A worker asks a person mid-task and waits (`POST …/tasks/{id}/ask`): it keeps its task past
//! several lease lengths, no one else can claim it, the long poll `GET …/decision` wakes it
//! with the decision (and its inbox gets `question_answered`), a decision neither releases nor
//! cancels the task, the deadline's default applies, a holder that leaves withdraws its
//! question, and the team's `questions.maxWaitMinutes` bounds the wait. Real API (SQLite, and
//! PostgreSQL with HUDDLE_TEST_BACKEND=postgres).

use huddle_tests::http::Api;
use huddle_tests::{eventually, TestDaemon};
use serde_json::{json, Value};

use super::gate_support::{get, id_of, in_secs, task};

async fn ask(holder: &Api, id: &str, body: Value) -> Value {
    holder
        .post(&holder.t(&format!("/tasks/{id}/ask")), body)
        .await
        .expect_status(201)
        .body
}

fn lease_ms(task: &Value) -> i64 {
    let at = task["leaseExpiresAt"]
        .as_str()
        .unwrap_or_else(|| panic!("{task}"));
    chrono::DateTime::parse_from_rfc3339(at)
        .unwrap()
        .timestamp_millis()
}

#[tokio::test]
async fn a_question_keeps_the_task_past_several_leases_and_the_answer_wakes_the_holder() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let holder = d.agent("qa", "tester-1", "tester").await;
    let other = d.agent("qa", "tester-2", "tester").await;
    task(&c, "TEST-001").await;
    task(&c, "TEST-002").await;
    let claimed = holder.claim(json!({"leaseMs": 300})).await.expect("a task");
    assert_eq!(claimed["id"], "TEST-001");
    let control = other
        .claim(json!({"leaseMs": 300}))
        .await
        .expect("TEST-002");
    assert_eq!(control["id"], "TEST-002");

    let asked = ask(
        &holder,
        "TEST-001",
        json!({"question": "Drop the legacy table?", "kind": "approval", "leaseMs": 5000}),
    )
    .await;
    let qid = id_of(&asked["question"]);
    assert_eq!(asked["question"]["owner"], "human");
    assert_eq!(asked["question"]["metadata"]["gate"]["asker"], "tester-1");
    assert_eq!(asked["task"]["status"], "in_progress");
    assert_eq!(asked["task"]["claimedBy"], "tester-1");
    assert!(
        asked["task"]["blockedBy"]
            .as_array()
            .unwrap()
            .contains(&json!(qid)),
        "{}",
        asked["task"]
    );
    // Without a deadline, the daemon's default wait (a day) is the question's deadline, and
    // the lease lasts past it.
    let deadline = asked["question"]["metadata"]["gate"]["deadline"]
        .as_str()
        .expect("a deadline");
    let deadline = chrono::DateTime::parse_from_rfc3339(deadline).unwrap();
    assert!(deadline > chrono::Utc::now() + chrono::Duration::hours(23));
    assert!(lease_ms(&asked["task"]) > deadline.timestamp_millis());
    let read = get(&c, "TEST-001").await;
    assert_eq!(read["gates"][0]["askedByHolder"], "tester-1", "{read}");
    assert_eq!(read["gates"][0]["status"], "open");

    // A heartbeat with a short lease does not shorten it.
    let beat = holder
        .post(
            &holder.t("/tasks/TEST-001/heartbeat"),
            json!({"leaseMs": 300}),
        )
        .await
        .expect_status(200)
        .body;
    assert!(lease_ms(&beat) > deadline.timestamp_millis(), "{beat}");
    // A second question while one is open, and a question about a task held by another.
    holder
        .post(
            &holder.t("/tasks/TEST-001/ask"),
            json!({"question": "And another?"}),
        )
        .await
        .expect_error(409, "invalid_transition");
    other
        .post(
            &other.t("/tasks/TEST-001/ask"),
            json!({"question": "Mine?"}),
        )
        .await
        .expect_error(409, "not_holder");

    // The control task's 300 ms lease runs out and it goes back to the queue; the asking
    // holder's task, claimed with the same lease, stays with it.
    eventually(30, "the control task's lease expires", || async {
        get(&c, "TEST-002").await["status"] == "pending"
    })
    .await;
    let kept = get(&c, "TEST-001").await;
    assert_eq!(kept["status"], "in_progress", "{kept}");
    assert_eq!(kept["claimedBy"], "tester-1");
    assert_eq!(kept["attempts"], 0);
    // No one else can take it: the other tester gets the control task back, nothing more.
    assert_eq!(other.claim(json!({})).await.unwrap()["id"], "TEST-002");
    assert!(other.claim(json!({})).await.is_none());

    // The holder's long poll, woken by the answer.
    let poll = {
        let holder = holder.clone();
        let path = holder.t(&format!("/tasks/{qid}/decision?waitMs=30000"));
        tokio::spawn(async move { holder.get(&path).await.expect_status(200).body })
    };
    let open = c
        .get(&c.t(&format!("/tasks/{qid}/decision")))
        .await
        .expect_status(200)
        .body;
    assert_eq!(open["status"], "open");
    let before = chrono::Utc::now().timestamp_millis();
    c.post(
        &c.t(&format!("/tasks/{qid}/answer")),
        json!({"decision": "reject", "answer": "No: archive it instead."}),
    )
    .await
    .expect_status(200);
    let woken = poll.await.unwrap();
    assert_eq!(woken["status"], "answered", "{woken}");
    assert_eq!(woken["decision"], "reject");
    assert_eq!(woken["answer"], "No: archive it instead.");
    assert_eq!(woken["answeredBy"], "coordinator");
    // A rejection answers the holder; the task stays its, with the lease it asked to resume
    // with (5 s from the decision), no longer the question's.
    let after = get(&c, "TEST-001").await;
    assert_eq!(after["status"], "in_progress", "{after}");
    assert_eq!(after["claimedBy"], "tester-1");
    let lease = lease_ms(&after);
    assert!(
        lease >= before + 5000 && lease < deadline.timestamp_millis(),
        "{after}"
    );
    let inbox = holder
        .get(&holder.t("/inbox"))
        .await
        .expect_status(200)
        .body;
    let told = inbox["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["type"] == "question_answered")
        .unwrap_or_else(|| panic!("no question_answered in {inbox}"))
        .clone();
    assert_eq!(told["data"]["question"], json!(qid));
    assert_eq!(told["data"]["decision"], "reject");
    // It may ask again, and complete its task.
    ask(&holder, "TEST-001", json!({"question": "Archive to S3?"})).await;
    holder
        .post(&holder.t("/tasks/TEST-001/complete"), json!({}))
        .await
        .expect_status(200);
}

#[tokio::test]
async fn a_holder_that_leaves_withdraws_its_question_and_the_deadline_decides() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let holder = d.agent("qa", "tester-1", "tester").await;
    let other = d.agent("qa", "tester-2", "tester").await;
    task(&c, "TEST-001").await;
    holder.claim(json!({})).await.expect("TEST-001");
    let q1 = id_of(&ask(&holder, "TEST-001", json!({"question": "Keep going?"})).await["question"]);
    // Released while waiting: the question is withdrawn and dropped from the blockers, so the
    // task is claimable again.
    holder
        .post(&holder.t("/tasks/TEST-001/release"), json!({}))
        .await
        .expect_status(200);
    eventually(30, "the released task's question is withdrawn", || async {
        get(&c, &q1).await["status"] == "cancelled"
    })
    .await;
    let q = get(&c, &q1).await;
    assert!(
        q["failureReason"]
            .as_str()
            .unwrap()
            .contains("no longer holds"),
        "{q}"
    );
    c.post(
        &c.t(&format!("/tasks/{q1}/answer")),
        json!({"answer": "yes"}),
    )
    .await
    .expect_error(409, "invalid_transition");
    let claimed = other.claim(json!({})).await.expect("claimable again");
    assert_eq!(claimed["id"], "TEST-001");
    assert!(
        claimed["blockedBy"].as_array().unwrap().is_empty(),
        "{claimed}"
    );

    // The deadline's default decision wakes the new holder.
    let q2 = id_of(
        &ask(
            &other,
            "TEST-001",
            json!({"question": "Ship it?", "kind": "approval", "deadline": in_secs(2)}),
        )
        .await["question"],
    );
    let path = other.t(&format!("/tasks/{q2}/decision?waitMs=5000"));
    eventually(30, "the deadline decides", || async {
        other.get(&path).await.expect_status(200).body["status"] == "answered"
    })
    .await;
    let decided = other.get(&path).await.expect_status(200).body;
    assert_eq!(decided["decision"], "reject", "{decided}");
    assert_eq!(decided["answeredBy"], "deadline");
    let t = get(&c, "TEST-001").await;
    assert_eq!(t["status"], "in_progress", "{t}");
    assert_eq!(t["claimedBy"], "tester-2");
}

#[tokio::test]
async fn the_team_bounds_the_wait_and_only_the_holder_asks() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let admin = d.admin();
    let holder = d.agent("qa", "tester-1", "tester").await;
    let me = holder.get(&holder.t("/me")).await.expect_status(200).body;
    assert_eq!(me["questions"]["maxWaitMinutes"], 1440, "{me}");
    assert_eq!(me["questions"]["askBelowGate"], json!(null));
    let settings = "/v1/teams/qa/settings";
    admin
        .put(settings, json!({"questions": {"maxWaitMinutes": 0}}))
        .await
        .expect_error(400, "invalid_field");
    let view = admin
        .put(
            settings,
            json!({"questions": {"maxWaitMinutes": 5, "askBelowGate": true}}),
        )
        .await
        .expect_status(200)
        .body;
    assert_eq!(view["questions"]["maxWaitMinutes"], 5, "{view}");
    let me = holder.get(&holder.t("/me")).await.expect_status(200).body;
    assert_eq!(me["questions"]["maxWaitMinutes"], 5, "{me}");
    assert_eq!(me["questions"]["askBelowGate"], true);

    task(&c, "TEST-001").await;
    // Not claimed yet: a coordinator gates it instead.
    holder
        .post(
            &holder.t("/tasks/TEST-001/ask"),
            json!({"question": "Now?"}),
        )
        .await
        .expect_error(409, "not_holder");
    holder.claim(json!({})).await.expect("TEST-001");
    holder
        .post(
            &holder.t("/tasks/TEST-001/ask"),
            json!({"question": "Later?", "deadline": in_secs(600)}),
        )
        .await
        .expect_error(400, "invalid_field");
    let asked = ask(&holder, "TEST-001", json!({"question": "Within five?"})).await;
    let deadline = asked["question"]["metadata"]["gate"]["deadline"]
        .as_str()
        .unwrap();
    let deadline = chrono::DateTime::parse_from_rfc3339(deadline).unwrap();
    assert!(deadline <= chrono::Utc::now() + chrono::Duration::minutes(5));
    // An observer may read the decision but not ask; the wait is bounded.
    let observer = d.agent("qa", "watcher", "observer").await;
    let qid = id_of(&asked["question"]);
    observer
        .get(&observer.t(&format!("/tasks/{qid}/decision")))
        .await
        .expect_status(200);
    observer
        .post(&observer.t("/tasks/TEST-001/ask"), json!({"question": "x"}))
        .await
        .expect_error(403, "forbidden");
    observer
        .get(&observer.t(&format!("/tasks/{qid}/decision?waitMs=600001")))
        .await
        .expect_error(400, "invalid_field");
    observer
        .get(&observer.t("/tasks/TEST-001/decision"))
        .await
        .expect_error(409, "invalid_transition");
}
