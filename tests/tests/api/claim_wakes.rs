//! Waiting claimers are woken one per task that becomes ready, by every way a task can become
//! ready, and only a claimer that may take the task is woken for it.

use huddle_tests::http::Api;
use huddle_tests::TestDaemon;
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
