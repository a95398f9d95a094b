//! Claims filtered by project over HTTP: a waiting claimer is woken only by a task its filter
//! admits, and bad filters get the one error shape.

use huddle_tests::http::Api;
use huddle_tests::TestDaemon;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::task::JoinHandle;

/// Starts a long-polling claim as a new tester and returns once it is parked (its first look
/// touched `lastSeenAt`; it joins the waiters before looking).
async fn park(d: &TestDaemon, coord: &Api, name: &str, body: Value) -> JoinHandle<Option<Value>> {
    let agent = d.agent("qa", name, "tester").await;
    let waiting = tokio::spawn(async move { agent.claim(body).await });
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

async fn woken_with(waiting: JoinHandle<Option<Value>>) -> Value {
    tokio::time::timeout(Duration::from_secs(30), waiting)
        .await
        .expect("woken long before waitMs")
        .unwrap()
        .expect("woken with a task, not 204")
}

async fn create(coord: &Api, id: &str, project: Option<&str>) {
    let metadata = project.map_or(json!({}), |p| json!({ "project": p }));
    coord
        .post(
            &coord.t("/tasks"),
            json!({"id": id, "subject": id, "metadata": metadata}),
        )
        .await
        .expect_status(201);
}

#[tokio::test]
async fn a_waiting_claimer_is_woken_only_by_a_task_of_its_project() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    // The calc claimer waits longest, so a wake-up that ignored projects would go to it.
    let calc = park(
        &d,
        &c,
        "calc-tester",
        json!({"waitMs": 60000, "project": "github.com/org/calc", "strictProject": true}),
    )
    .await;
    let shop = park(
        &d,
        &c,
        "shop-tester",
        json!({"waitMs": 60000, "project": "shop"}),
    )
    .await;
    create(&c, "TEST-001", Some("shop")).await;
    let got = woken_with(shop).await;
    assert_eq!(got["id"], "TEST-001");
    assert_eq!(got["claimedBy"], "shop-tester");
    assert!(
        !calc.is_finished(),
        "the calc claimer took or lost a shop wake"
    );

    // A task naming no project is not for a strict claimer: a loose one behind it takes it.
    let loose = park(
        &d,
        &c,
        "loose-tester",
        json!({"waitMs": 60000, "project": "shop"}),
    )
    .await;
    create(&c, "TEST-002", None).await;
    assert_eq!(woken_with(loose).await["id"], "TEST-002");

    create(&c, "TEST-003", Some("github.com/org/calc")).await;
    let got = woken_with(calc).await;
    assert_eq!(got["id"], "TEST-003");
    assert_eq!(got["metadata"]["project"], "github.com/org/calc");
}

#[tokio::test]
async fn a_claim_takes_only_tasks_its_filter_admits() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    create(&c, "TEST-001", Some("shop")).await;
    create(&c, "TEST-002", None).await;
    let t = d.agent("qa", "calc-tester", "tester").await;
    let strict = json!({"project": "calc", "strictProject": true});
    assert_eq!(t.claim(strict.clone()).await, None);
    let got = t.claim(json!({"project": "calc"})).await.unwrap();
    assert_eq!(got["id"], "TEST-002");
    assert_eq!(t.claim(json!({"project": "calc"})).await, None);
    let task = c.get(&c.t("/tasks/TEST-001")).await.body;
    assert_eq!(task["status"], "pending");

    let refused = t
        .post(&t.t("/tasks/claim"), json!({"project": "x".repeat(201)}))
        .await
        .expect_error(400, "invalid_field");
    assert_eq!(
        refused.body["error"]["details"]["field"], "project",
        "{}",
        refused.body
    );
    let refused = t
        .post(&t.t("/tasks/claim"), json!({"strictProject": true}))
        .await
        .expect_error(400, "invalid_field");
    assert_eq!(refused.body["error"]["details"]["field"], "strictProject");
    let refused = c
        .post(
            &c.t("/tasks"),
            json!({"id": "TEST-009", "subject": "s", "metadata": {"project": ["calc"]}}),
        )
        .await
        .expect_error(400, "invalid_field");
    assert_eq!(
        refused.body["error"]["details"]["field"],
        "metadata.project"
    );
    c.get(&c.t("/tasks/TEST-009")).await.expect_status(404);
}
