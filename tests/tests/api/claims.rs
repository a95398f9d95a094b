//! Claiming over real HTTP: exclusivity under load, dependency order, long polls and leases.

use huddle_tests::{eventually, TestDaemon};
use serde_json::json;
use std::collections::HashMap;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thirty_two_claimers_take_a_thousand_tasks_each_exactly_once() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    for chunk in (1..=1000).collect::<Vec<_>>().chunks(250) {
        let batch: Vec<_> = chunk
            .iter()
            .map(|i| json!({"id": format!("TEST-{i:04}"), "subject": "t"}))
            .collect();
        c.post(&c.t("/tasks"), json!(batch))
            .await
            .expect_status(201);
    }
    let mut workers = Vec::new();
    for w in 0..32 {
        let api = d.agent("qa", &format!("tester-{w}"), "tester").await;
        workers.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            while let Some(task) = api.claim(json!({})).await {
                assert_eq!(task["claimedBy"], format!("tester-{w}"));
                mine.push(task["id"].as_str().unwrap().to_string());
            }
            mine
        }));
    }
    let mut claims: HashMap<String, usize> = HashMap::new();
    for w in workers {
        for id in w.await.unwrap() {
            *claims.entry(id).or_default() += 1;
        }
    }
    assert_eq!(claims.len(), 1000, "every task was claimed");
    assert!(
        claims.values().all(|n| *n == 1),
        "no task was claimed twice"
    );
    let left = c
        .get(&c.t("/tasks?status=pending"))
        .await
        .expect_status(200);
    assert!(left.body["tasks"].as_array().unwrap().is_empty());
}

/// Claims and completes until nothing is ready; returns the completion order.
async fn drain(api: &huddle_tests::Api) -> Vec<String> {
    let mut order = Vec::new();
    while let Some(task) = api.claim(json!({})).await {
        let id = task["id"].as_str().unwrap().to_string();
        api.post(&api.t(&format!("/tasks/{id}/complete")), json!({}))
            .await
            .expect_status(200);
        order.push(id);
    }
    order
}

#[tokio::test]
async fn a_chain_and_a_diamond_unblock_in_dependency_order() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    c.post(
        &c.t("/tasks"),
        json!([
            {"id": "TEST-003", "subject": "chain end", "blockedBy": ["TEST-002"]},
            {"id": "TEST-002", "subject": "chain middle", "blockedBy": ["TEST-001"]},
            {"id": "TEST-001", "subject": "chain start"},
            {"id": "TEST-014", "subject": "diamond bottom", "blockedBy": ["TEST-012", "TEST-013"]},
            {"id": "TEST-012", "subject": "diamond left", "blockedBy": ["TEST-011"]},
            {"id": "TEST-013", "subject": "diamond right", "blockedBy": ["TEST-011"]},
            {"id": "TEST-011", "subject": "diamond top"}
        ]),
    )
    .await
    .expect_status(201);
    let tester = d.agent("qa", "tester", "tester").await;
    let order = drain(&tester).await;
    assert_eq!(order.len(), 7);
    let pos = |id: &str| order.iter().position(|x| x == id).unwrap();
    assert!(pos("TEST-001") < pos("TEST-002") && pos("TEST-002") < pos("TEST-003"));
    assert!(pos("TEST-011") < pos("TEST-012") && pos("TEST-011") < pos("TEST-013"));
    assert!(pos("TEST-012") < pos("TEST-014") && pos("TEST-013") < pos("TEST-014"));
}

#[tokio::test]
async fn claims_match_prefixes_and_owners() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    c.post(
        &c.t("/tasks"),
        json!([
            {"id": "QARUN-001", "subject": "for executors"},
            {"id": "TEST-001", "subject": "for tester-2 only", "owner": "tester-2"},
            {"id": "TEST-002", "subject": "for any tester", "owner": "tester"},
            {"id": "IMPL-001", "subject": "explicit prefix"}
        ]),
    )
    .await
    .expect_status(201);
    let t1 = d.agent("qa", "tester-1", "tester").await;
    let t2 = d.agent("qa", "tester-2", "tester").await;
    let ex = d.agent("qa", "executor", "executor").await;
    assert_eq!(t1.claim(json!({})).await.unwrap()["id"], "TEST-002");
    assert!(
        t1.claim(json!({})).await.is_none(),
        "TEST-001 belongs to tester-2"
    );
    assert_eq!(t2.claim(json!({})).await.unwrap()["id"], "TEST-001");
    assert_eq!(ex.claim(json!({})).await.unwrap()["id"], "QARUN-001");
    assert_eq!(
        t1.claim(json!({"prefixes": ["IMPL-"]})).await.unwrap()["id"],
        "IMPL-001"
    );
    c.post(&c.t("/tasks/claim"), json!({}))
        .await
        .expect_error(400, "invalid_field");
}

#[tokio::test]
async fn a_long_poll_is_woken_by_a_new_task() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let tester = d.agent("qa", "tester", "tester").await;
    let waiter = tokio::spawn(async move { tester.claim(json!({"waitMs": 30000})).await });
    // The claim is parked; give it a task and it answers long before its 30 s are up.
    eventually(10, "claimer is waiting", || {
        let c = c.clone();
        async move {
            c.get(&c.t("/agents")).await.body["agents"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a["name"] == "tester" && !a["lastSeenAt"].is_null())
        }
    })
    .await;
    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-001", "subject": "wake up"}),
    )
    .await
    .expect_status(201);
    let got = tokio::time::timeout(std::time::Duration::from_secs(20), waiter)
        .await
        .expect("woken before waitMs")
        .unwrap();
    assert_eq!(got.unwrap()["id"], "TEST-001");
}

#[tokio::test]
async fn an_expired_lease_is_reclaimed_by_another_agent_and_heartbeats_keep_it() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    c.post(
        &c.t("/tasks"),
        json!([{"id": "TEST-001", "subject": "abandoned"}, {"id": "TEST-002", "subject": "kept"}]),
    )
    .await
    .expect_status(201);
    let quitter = d.agent("qa", "quitter", "tester").await;
    let keeper = d.agent("qa", "keeper", "tester").await;
    let rescuer = d.agent("qa", "rescuer", "tester").await;
    assert_eq!(
        quitter.claim(json!({"leaseMs": 300})).await.unwrap()["id"],
        "TEST-001"
    );
    let held = keeper.claim(json!({"leaseMs": 2000})).await.unwrap();
    assert_eq!(held["id"], "TEST-002");
    // The keeper heartbeats for a long lease; the quitter goes silent.
    let beat = keeper
        .post(
            &keeper.t("/tasks/TEST-002/heartbeat"),
            json!({"leaseMs": 600000}),
        )
        .await
        .expect_status(200);
    assert!(
        beat.body["leaseExpiresAt"].as_str() > held["leaseExpiresAt"].as_str(),
        "the heartbeat moved the lease"
    );
    let rescued = rescuer
        .claim(json!({"waitMs": 20000}))
        .await
        .expect("reclaimed after expiry");
    assert_eq!(rescued["id"], "TEST-001");
    assert_eq!(rescued["attempts"], 1);
    quitter
        .post(&quitter.t("/tasks/TEST-001/complete"), json!({}))
        .await
        .expect_error(409, "not_holder");
    rescuer
        .post(
            &rescuer.t("/tasks/TEST-001/complete"),
            json!({"result": {"ok": true}}),
        )
        .await
        .expect_status(200);
    let kept = c.get(&c.t("/tasks/TEST-002")).await.expect_status(200);
    assert_eq!(kept.body["claimedBy"], "keeper");
    assert_eq!(kept.body["attempts"], 0);
}

#[tokio::test]
async fn a_task_that_keeps_losing_its_lease_fails_with_a_reason() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-001", "subject": "cursed", "maxAttempts": 2}),
    )
    .await
    .expect_status(201);
    let tester = d.agent("qa", "tester", "tester").await;
    for _ in 0..2 {
        tester
            .claim(json!({"leaseMs": 50, "waitMs": 20000}))
            .await
            .expect("claimable again");
    }
    eventually(20, "task failed", || {
        let c = c.clone();
        async move { c.get(&c.t("/tasks/TEST-001")).await.body["status"] == "failed" }
    })
    .await;
    let t = c.get(&c.t("/tasks/TEST-001")).await.body;
    assert_eq!(t["attempts"], 2);
    assert!(
        t["failureReason"].as_str().unwrap().contains("expired"),
        "{t}"
    );
}

#[tokio::test]
async fn a_claim_with_max_takes_several_tasks_at_once() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let batch: Vec<_> = (1..=5)
        .map(|i| json!({"id": format!("TEST-{i:03}"), "subject": "t"}))
        .collect();
    c.post(&c.t("/tasks"), json!(batch))
        .await
        .expect_status(201);
    let tester = d.agent("qa", "tester", "tester").await;
    let first = tester
        .post(&tester.t("/tasks/claim"), json!({"max": 3}))
        .await
        .expect_status(200);
    let ids: Vec<_> = first.body["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["TEST-001", "TEST-002", "TEST-003"]);
    let rest = tester
        .post(&tester.t("/tasks/claim"), json!({"max": 3}))
        .await
        .expect_status(200);
    assert_eq!(rest.body["tasks"].as_array().unwrap().len(), 2);
    let none = tester
        .post(&tester.t("/tasks/claim"), json!({"max": 3}))
        .await;
    assert_eq!(none.status, 204);
    tester
        .post(&tester.t("/tasks/claim"), json!({"max": 0}))
        .await
        .expect_error(400, "invalid_field");
    tester
        .post(&tester.t("/tasks/claim"), json!({"max": 101}))
        .await
        .expect_error(400, "invalid_field");
}

#[tokio::test]
async fn a_batched_completion_is_all_or_none() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let batch: Vec<_> = (1..=4)
        .map(|i| json!({"id": format!("TEST-{i:03}"), "subject": "t"}))
        .collect();
    c.post(&c.t("/tasks"), json!(batch))
        .await
        .expect_status(201);
    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-005", "subject": "after", "blockedBy": ["TEST-001", "TEST-002"]}),
    )
    .await
    .expect_status(201);
    let tester = d.agent("qa", "tester", "tester").await;
    let other = d.agent("qa", "other", "tester").await;
    tester
        .post(&tester.t("/tasks/claim"), json!({"max": 2}))
        .await
        .expect_status(200);
    other.claim(json!({})).await.unwrap(); // TEST-003
                                           // TEST-003 is not the tester's: nothing is completed.
    let refused = tester
        .post(
            &tester.t("/tasks/complete"),
            json!({"tasks": [{"id": "TEST-001"}, {"id": "TEST-003"}]}),
        )
        .await
        .expect_error(409, "not_holder");
    assert!(refused.body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("TEST-003"));
    assert_eq!(
        c.get(&c.t("/tasks/TEST-001")).await.body["status"],
        "in_progress"
    );
    let done = tester
        .post(
            &tester.t("/tasks/complete"),
            json!({"tasks": [{"id": "TEST-001", "result": {"ok": 1}}, {"id": "TEST-002"}]}),
        )
        .await
        .expect_status(200);
    assert_eq!(done.body["tasks"][0]["result"], json!({"ok": 1}));
    assert_eq!(done.body["tasks"][1]["status"], "completed");
    let ready = c.get(&c.t("/tasks?ready=true")).await.body;
    let ids: Vec<_> = ready["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].clone())
        .collect();
    assert_eq!(ids, [json!("TEST-004"), json!("TEST-005")]);
    tester
        .post(&tester.t("/tasks/complete"), json!({"tasks": []}))
        .await
        .expect_error(400, "invalid_field");
}
