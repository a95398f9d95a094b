//! What the dashboard's task detail and its role-aware actions read: `GET …/tasks/{id}/events`
//! (one task's changes, newest first, no other task's) and `GET …/me` (the token's own name and
//! role). Both over real HTTP, on every backend the suite runs on.

use huddle_tests::TestDaemon;
use serde_json::{json, Value};

fn kinds(page: &Value) -> Vec<String> {
    page["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_tasks_events_are_its_own_newest_first() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let tester = d.agent("qa", "tester", "tester").await;
    let watcher = d.agent("qa", "watcher", "observer").await;
    c.post(
        &c.t("/tasks"),
        json!([{"id": "TEST-001", "subject": "a"}, {"id": "TEST-002", "subject": "b", "blockedBy": ["TEST-001"]}]),
    )
    .await
    .expect_status(201);
    let claimed = tester
        .claim(json!({"leaseMs": 60_000}))
        .await
        .expect("TEST-001");
    assert_eq!(claimed["id"], "TEST-001");
    tester
        .post(&tester.t("/tasks/TEST-001/complete"), json!({}))
        .await
        .expect_status(200);
    c.patch(&c.t("/tasks/TEST-002"), json!({"subject": "b, edited"}))
        .await
        .expect_status(200);

    let page = watcher
        .get(&watcher.t("/tasks/TEST-001/events"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(
        kinds(&page),
        ["task.completed", "task.claimed", "task.created"],
        "{page}"
    );
    let events = page["events"].as_array().unwrap();
    assert!(
        events.iter().all(|e| e["data"]["id"] == "TEST-001"),
        "{page}"
    );
    assert_eq!(events[0]["data"]["status"], "completed");
    assert_eq!(events[1]["data"]["claimedBy"], "tester");
    assert!(events[0]["seq"].as_i64() > events[1]["seq"].as_i64());

    let edited = c
        .get(&c.t("/tasks/TEST-002/events"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(kinds(&edited), ["task.updated", "task.created"], "{edited}");
    assert_eq!(edited["events"][0]["data"]["subject"], "b, edited");

    let newest = c
        .get(&c.t("/tasks/TEST-001/events?limit=1"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(kinds(&newest), ["task.completed"]);

    c.get(&c.t("/tasks/TEST-404/events"))
        .await
        .expect_error(404, "not_found");
    c.get(&c.t("/tasks/TEST-001/events?limit=0"))
        .await
        .expect_error(400, "invalid_field");
    c.get(&c.t("/tasks/TEST-001/events?since=1"))
        .await
        .expect_status(400);
    let other = d.team("other").await;
    other
        .get("/v1/teams/qa/tasks/TEST-001/events")
        .await
        .expect_error(404, "not_found");
    d.admin()
        .get("/v1/teams/qa/tasks/TEST-001/events")
        .await
        .expect_error(403, "forbidden");
}

#[tokio::test]
async fn me_names_the_tokens_agent_and_role() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let watcher = d.agent("qa", "watcher", "observer").await;
    let me = c.get(&c.t("/me")).await.expect_status(200).body;
    assert_eq!(
        (&me["name"], &me["role"]),
        (&json!("coordinator"), &json!("coordinator"))
    );
    assert_eq!(me["questions"], json!({"maxWaitMinutes": 1440}), "{me}");
    let me = watcher.get(&watcher.t("/me")).await.expect_status(200).body;
    assert_eq!(
        (&me["name"], &me["role"]),
        (&json!("watcher"), &json!("observer"))
    );
    d.admin()
        .get("/v1/teams/qa/me")
        .await
        .expect_error(403, "forbidden");
    let other = d.team("other").await;
    other
        .get("/v1/teams/qa/me")
        .await
        .expect_error(404, "not_found");
}
