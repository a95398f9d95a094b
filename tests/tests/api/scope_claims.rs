//! File scopes over HTTP (metadata `scope`): two tasks whose scopes overlap are never in
//! progress at once, on either backend; `why-not-ready` names what holds a task back; a bad
//! scope gets the one error shape.

use huddle_tests::http::Api;
use huddle_tests::TestDaemon;
use serde_json::{json, Value};
use std::time::Duration;

async fn create(coord: &Api, id: &str, metadata: Value) {
    coord
        .post(
            &coord.t("/tasks"),
            json!({"id": id, "subject": id, "metadata": metadata}),
        )
        .await
        .expect_status(201);
}

fn scope(globs: &[&str]) -> Value {
    json!({ "scope": globs })
}

async fn claimed_id(agent: &Api) -> Option<String> {
    let task = agent.claim(json!({})).await?;
    Some(task["id"].as_str().unwrap().to_string())
}

async fn reasons(api: &Api, id: &str) -> Vec<Value> {
    let r = api
        .get(&api.t(&format!("/tasks/{id}/why-not-ready")))
        .await
        .expect_status(200);
    assert_eq!(r.body["id"], id);
    r.body["reasons"].as_array().unwrap().clone()
}

async fn in_progress(api: &Api) -> Vec<String> {
    let list = api
        .get(&api.t("/tasks?status=in_progress"))
        .await
        .expect_status(200);
    list.body["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_task_whose_scope_overlaps_one_in_progress_waits_and_others_are_taken() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    create(
        &c,
        "TEST-001",
        scope(&["src/parser/**", "tests/test_parser.py"]),
    )
    .await;
    create(&c, "TEST-002", scope(&["./src/parser/lex.rs"])).await;
    create(&c, "TEST-003", scope(&["docs/"])).await;
    create(&c, "TEST-004", json!({})).await;
    let mut w = Vec::new();
    for i in 1..=4 {
        w.push(d.agent("qa", &format!("w{i}"), "tester").await);
    }
    assert_eq!(claimed_id(&w[0]).await.as_deref(), Some("TEST-001"));
    // TEST-002 overlaps TEST-001: passed over for the next ones, then nothing.
    assert_eq!(claimed_id(&w[1]).await.as_deref(), Some("TEST-003"));
    assert_eq!(claimed_id(&w[2]).await.as_deref(), Some("TEST-004"));
    assert_eq!(claimed_id(&w[3]).await, None);
    // The same with a project filter (on PostgreSQL, the scoped claim's filtered query).
    for filter in [
        json!({"project": "p"}),
        json!({"project": "p", "strictProject": true}),
    ] {
        assert_eq!(w[3].claim(filter).await, None);
    }

    let why = reasons(&c, "TEST-002").await;
    assert_eq!(why.len(), 1, "{why:?}");
    assert_eq!(why[0]["kind"], "scope");
    assert_eq!(why[0]["tasks"], json!(["TEST-001"]));
    assert_eq!(why[0]["holder"], "w1");
    assert_eq!(why[0]["glob"], "./src/parser/lex.rs");
    assert_eq!(why[0]["heldGlob"], "src/parser/**");
    assert!(reasons(&c, "TEST-001").await[0]["kind"] == "status");

    w[0].post(&w[0].t("/tasks/TEST-001/complete"), json!({}))
        .await
        .expect_status(200);
    assert!(reasons(&c, "TEST-002").await.is_empty());
    assert_eq!(claimed_id(&w[3]).await.as_deref(), Some("TEST-002"));
}

#[tokio::test]
async fn releasing_or_failing_the_holder_frees_the_overlapping_task() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    create(&c, "TEST-001", scope(&["src"])).await;
    create(&c, "TEST-002", scope(&["src/a.py"])).await;
    let a = d.agent("qa", "a", "tester").await;
    let b = d.agent("qa", "b", "tester").await;
    assert_eq!(claimed_id(&a).await.as_deref(), Some("TEST-001"));
    assert_eq!(claimed_id(&b).await, None);
    a.post(&a.t("/tasks/TEST-001/release"), json!({}))
        .await
        .expect_status(200);
    // Back in the queue, the older task is taken first and holds TEST-002 back again.
    assert_eq!(claimed_id(&b).await.as_deref(), Some("TEST-001"));
    assert_eq!(claimed_id(&a).await, None);
    b.post(
        &b.t("/tasks/TEST-001/fail"),
        json!({"reason": "cannot", "final": true}),
    )
    .await
    .expect_status(200);
    assert_eq!(claimed_id(&a).await.as_deref(), Some("TEST-002"));
}

#[tokio::test]
async fn a_waiting_claimer_gets_the_held_back_task_when_the_holders_lease_expires() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-001", "subject": "s", "maxAttempts": 1, "metadata": scope(&["src"])}),
    )
    .await
    .expect_status(201);
    create(&c, "TEST-002", scope(&["src/a.py"])).await;
    let quitter = d.agent("qa", "quitter", "tester").await;
    let waiter = d.agent("qa", "waiter", "tester").await;
    let held = quitter.claim(json!({"leaseMs": 300})).await.unwrap();
    assert_eq!(held["id"], "TEST-001");
    // Its lease lapses on its last attempt: TEST-001 fails, TEST-002 is no longer held back
    // though nothing became ready; the waiting claimer is woken for it.
    let got = tokio::time::timeout(
        Duration::from_secs(30),
        waiter.claim(json!({"waitMs": 20000})),
    )
    .await
    .expect("answered before waitMs")
    .expect("woken with the freed task");
    assert_eq!(got["id"], "TEST-002");
    let first = c.get(&c.t("/tasks/TEST-001")).await.body;
    assert_eq!(first["status"], "failed");
}

/// Many claimers at once over tasks that all overlap: one task in progress at a time, round
/// after round, and each round one of them gets it.
#[tokio::test]
async fn concurrent_claimers_never_hold_two_overlapping_tasks() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    // Each racer owns one task, so each claim sees another task and only the exclusion keeps
    // them apart.
    let tasks: Vec<Value> = (0..8)
        .map(|i| {
            json!({"id": format!("TEST-{i:03}"), "subject": "s", "owner": format!("racer{i}"),
                        "metadata": scope(&["src/**", &format!("tests/t{i}.py")])})
        })
        .collect();
    c.post(&c.t("/tasks"), Value::Array(tasks))
        .await
        .expect_status(201);
    let mut workers = Vec::new();
    for i in 0..8 {
        workers.push(d.agent("qa", &format!("racer{i}"), "tester").await);
    }
    for round in 1..=8 {
        let got: Vec<Option<Value>> =
            futures::future::join_all(workers.iter().map(|w| w.claim(json!({"max": 2})))).await;
        let winners: Vec<(usize, String)> = got
            .iter()
            .enumerate()
            .filter_map(|(i, t)| {
                let tasks = t.as_ref()?["tasks"].as_array()?.clone();
                assert_eq!(
                    tasks.len(),
                    1,
                    "one claim took two overlapping tasks: {tasks:?}"
                );
                Some((i, tasks[0]["id"].as_str()?.to_string()))
            })
            .collect();
        assert_eq!(winners.len(), 1, "round {round}: {winners:?}");
        assert_eq!(in_progress(&c).await, vec![winners[0].1.clone()]);
        let (i, id) = &winners[0];
        let w = &workers[*i];
        w.post(&w.t(&format!("/tasks/{id}/complete")), json!({}))
            .await
            .expect_status(200);
    }
    assert!(in_progress(&c).await.is_empty());
}

#[tokio::test]
async fn why_not_ready_names_unfinished_blockers_and_is_empty_when_claimable() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    create(&c, "TEST-001", json!({})).await;
    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-002", "subject": "s", "blockedBy": ["TEST-001"]}),
    )
    .await
    .expect_status(201);
    let why = reasons(&c, "TEST-002").await;
    assert_eq!(why.len(), 1, "{why:?}");
    assert_eq!(why[0]["kind"], "blockedBy");
    assert_eq!(why[0]["tasks"], json!(["TEST-001"]));
    assert!(why[0]["message"].as_str().unwrap().contains("TEST-001"));
    assert!(reasons(&c, "TEST-001").await.is_empty());
    c.get(&c.t("/tasks/TEST-404/why-not-ready"))
        .await
        .expect_error(404, "not_found");
}

#[tokio::test]
async fn a_bad_scope_is_refused_with_the_field_named() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    for (metadata, field) in [
        (json!({"scope": "src"}), "metadata.scope"),
        (json!({"scope": ["src", ""]}), "metadata.scope[1]"),
        (json!({"scope": ["../etc"]}), "metadata.scope[0]"),
        (json!({"scope": ["/abs"]}), "metadata.scope[0]"),
        (json!({"scope": vec!["a"; 101]}), "metadata.scope"),
    ] {
        let r = c
            .post(
                &c.t("/tasks"),
                json!({"id": "TEST-001", "subject": "s", "metadata": metadata}),
            )
            .await
            .expect_error(400, "invalid_field");
        assert_eq!(r.body["error"]["details"]["field"], field, "{}", r.body);
    }
    create(&c, "TEST-001", json!({})).await;
    let r = c
        .patch(&c.t("/tasks/TEST-001"), json!({"metadata": {"scope": [1]}}))
        .await
        .expect_error(400, "invalid_field");
    assert_eq!(r.body["error"]["details"]["field"], "metadata.scope[0]");
    let ok = c
        .patch(
            &c.t("/tasks/TEST-001"),
            json!({"metadata": {"scope": ["src/**"]}}),
        )
        .await
        .expect_status(200);
    assert_eq!(ok.body["metadata"]["scope"], json!(["src/**"]));
}
