//! Waiting claimers are woken one per task that becomes ready, by every way a task can become
//! ready, and only a claimer that may take the task is woken for it.

use huddle_tests::http::Api;
use huddle_tests::{eventually, TestDaemon};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::task::JoinHandle;

/// Starts a long-polling claim as a new agent and returns once it is parked: its first look
/// has touched `lastSeenAt`, and it joins the waiters before looking.
async fn park(d: &TestDaemon, coord: &Api, name: &str, role: &str) -> JoinHandle<Option<Value>> {
    let agent = d.agent("qa", name, role).await;
    let waiting = tokio::spawn(async move { agent.claim(json!({"waitMs": 60000})).await });
    huddle_tests::eventually(20, &format!("{name} is waiting"), || {
        let coord = coord.clone();
        async move {
            coord.get(&coord.t("/agents")).await.body["agents"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a["name"] == name && !a["lastSeenAt"].is_null())
        }
    })
    .await;
    waiting
}

/// The task a parked claim got, failing if it was not woken well before its wait ran out.
async fn woken_with(waiting: JoinHandle<Option<Value>>) -> String {
    let task = tokio::time::timeout(Duration::from_secs(30), waiting)
        .await
        .expect("woken long before waitMs")
        .unwrap()
        .expect("woken with a task, not 204");
    task["id"].as_str().unwrap().to_string()
}

async fn create(coord: &Api, tasks: Value) {
    coord
        .post(&coord.t("/tasks"), tasks)
        .await
        .expect_status(201);
}

#[tokio::test]
async fn a_waiting_claimer_is_woken_by_every_way_a_task_becomes_ready() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let holder = d.agent("qa", "holder", "tester").await;
    let hold = |id: &'static str, lease: u64| {
        let holder = holder.clone();
        async move {
            let t = holder.claim(json!({"leaseMs": lease})).await.unwrap();
            assert_eq!(t["id"], id);
        }
    };

    // Its blocker completed.
    create(
        &c,
        json!([{"id": "TEST-001", "subject": "a"},
                      {"id": "TEST-002", "subject": "b", "blockedBy": ["TEST-001"]}]),
    )
    .await;
    hold("TEST-001", 60000).await;
    let w = park(&d, &c, "after-blocker", "tester").await;
    holder
        .post(&holder.t("/tasks/TEST-001/complete"), json!({}))
        .await
        .expect_status(200);
    assert_eq!(woken_with(w).await, "TEST-002");

    // Released by its holder.
    create(&c, json!({"id": "TEST-003", "subject": "c"})).await;
    hold("TEST-003", 60000).await;
    let w = park(&d, &c, "after-release", "tester").await;
    holder
        .post(&holder.t("/tasks/TEST-003/release"), json!({}))
        .await
        .expect_status(200);
    assert_eq!(woken_with(w).await, "TEST-003");

    // Its holder's lease expired.
    create(&c, json!({"id": "TEST-004", "subject": "d"})).await;
    hold("TEST-004", 1500).await;
    let w = park(&d, &c, "after-expiry", "tester").await;
    assert_eq!(woken_with(w).await, "TEST-004");

    // Its last blocker removed by a patch.
    create(
        &c,
        json!([{"id": "TEST-005", "subject": "e"},
                      {"id": "TEST-006", "subject": "f", "blockedBy": ["TEST-005"]}]),
    )
    .await;
    hold("TEST-005", 60000).await;
    let w = park(&d, &c, "after-unblock", "tester").await;
    c.patch(
        &c.t("/tasks/TEST-006"),
        json!({"removeBlockedBy": ["TEST-005"]}),
    )
    .await
    .expect_status(200);
    assert_eq!(woken_with(w).await, "TEST-006");

    // Handed to the waiter by a patch of its owner.
    create(
        &c,
        json!({"id": "TEST-007", "subject": "g", "owner": "someone-else"}),
    )
    .await;
    let w = park(&d, &c, "new-owner", "tester").await;
    c.patch(&c.t("/tasks/TEST-007"), json!({"owner": "new-owner"}))
        .await
        .expect_status(200);
    assert_eq!(woken_with(w).await, "TEST-007");
}

#[tokio::test]
async fn each_new_task_wakes_one_waiting_claimer_and_none_is_lost() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let mut waiting = Vec::new();
    for i in 0..4 {
        waiting.push(park(&d, &c, &format!("w{i}"), "tester").await);
    }
    create(&c, json!({"id": "TEST-001", "subject": "one"})).await;
    // Exactly one claimer ends; the other three stay parked.
    let (first, _, rest) = futures::future::select_all(waiting).await;
    assert_eq!(first.unwrap().unwrap()["id"], "TEST-001");
    create(
        &c,
        json!([{"id": "TEST-002", "subject": "two"}, {"id": "TEST-003", "subject": "three"},
               {"id": "TEST-004", "subject": "four"}]),
    )
    .await;
    let mut got = Vec::new();
    for w in rest {
        got.push(woken_with(w).await);
    }
    got.sort();
    assert_eq!(got, ["TEST-002", "TEST-003", "TEST-004"]);
}

#[tokio::test]
async fn a_task_wakes_a_claimer_that_may_take_it_not_simply_the_oldest() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let oldest = park(&d, &c, "oldest", "tester").await;
    let executor = park(&d, &c, "executor", "executor").await;
    let named = park(&d, &c, "named", "tester").await;
    create(&c, json!({"id": "QARUN-001", "subject": "run"})).await;
    assert_eq!(woken_with(executor).await, "QARUN-001");
    create(
        &c,
        json!({"id": "TEST-001", "subject": "mine", "owner": "named"}),
    )
    .await;
    assert_eq!(woken_with(named).await, "TEST-001");
    create(&c, json!({"id": "TEST-002", "subject": "anyone's"})).await;
    assert_eq!(woken_with(oldest).await, "TEST-002");
}

#[tokio::test]
async fn a_large_batch_of_new_tasks_wakes_every_waiting_claimer() {
    // 100 tasks in one request: past what one PostgreSQL announcement names, so replicas are
    // told only that tasks changed; on SQLite each task wakes a claimer of its own.
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let mut waiting = Vec::new();
    for i in 0..4 {
        waiting.push(park(&d, &c, &format!("w{i}"), "tester").await);
    }
    let batch: Vec<_> = (1..=100)
        .map(|i| json!({"id": format!("TEST-{i:03}"), "subject": "batch"}))
        .collect();
    create(&c, json!(batch)).await;
    let mut got = Vec::new();
    for w in waiting {
        got.push(woken_with(w).await);
    }
    got.sort();
    got.dedup();
    assert_eq!(got.len(), 4, "four distinct tasks: {got:?}");
}

const HANDED_OVER: &str = "huddle_claims_handed_over_total";

#[tokio::test]
async fn on_sqlite_a_waiting_claimer_is_served_in_the_write_that_made_its_task_ready() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let sqlite = std::env::var("HUDDLE_TEST_BACKEND").as_deref() != Ok("postgres");
    let before = d.metric(HANDED_OVER).await;
    // A claimer counts as parked once its first look is done; its claim is left with the queue
    // a moment later, so a task created in between wakes it instead. A few rounds make sure
    // the handover is seen (the first almost always is).
    let mut rounds = 0;
    loop {
        rounds += 1;
        let name = format!("w{rounds}");
        let w = park(&d, &c, &name, "tester").await;
        let id = format!("TEST-{rounds:03}");
        create(&c, json!({"id": id, "subject": "handed over"})).await;
        assert_eq!(woken_with(w).await, id);
        let task = c.get(&c.t(&format!("/tasks/{id}"))).await.body;
        assert_eq!(task["status"], "in_progress");
        assert_eq!(task["claimedBy"], name.as_str());
        let handed = d.metric(HANDED_OVER).await - before;
        if !sqlite {
            assert_eq!(
                handed, 0.0,
                "PostgreSQL wakes claimers; it hands nothing over"
            );
            break;
        }
        if handed >= 1.0 {
            break;
        }
        assert!(rounds < 20, "no claim was handed over in {rounds} rounds");
    }
}

#[tokio::test]
async fn a_claimer_that_left_while_waiting_takes_no_task_with_it() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let waiting = r#"huddle_long_polls_waiting{kind="claim"}"#;
    let gone = park(&d, &c, "gone", "tester").await;
    eventually(20, "the claim to wait", || async {
        d.metric(waiting).await >= 1.0
    })
    .await;
    gone.abort(); // the connection closes with the client's task
    eventually(20, "the daemon to see the client leave", || async {
        d.metric(waiting).await == 0.0
    })
    .await;
    create(
        &c,
        json!({"id": "TEST-001", "subject": "for whoever is here"}),
    )
    .await;
    let other = d.agent("qa", "here", "tester").await;
    let task = other.claim(json!({})).await.expect("the task is free");
    assert_eq!(task["id"], "TEST-001");
    assert_eq!(task["claimedBy"], "here");
    assert_eq!(task["attempts"], 0, "the client that left used no attempt");
}
