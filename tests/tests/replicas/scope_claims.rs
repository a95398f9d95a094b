//! File scopes across replicas: claims made at once on two replicas, over tasks whose scopes
//! all overlap and tasks without a scope, never leave two overlapping tasks in progress (the
//! scoped claims' advisory lock is the database's, not a replica's).

use super::{on, replicas, team};
use huddle_tests::Api;
use serde_json::{json, Value};

/// Claims with `api`; the ids taken (none on 204).
async fn claim(api: &Api) -> Vec<String> {
    let reply = api
        .post(
            &api.t("/tasks/claim"),
            json!({"prefixes": ["TEST"], "leaseMs": 600000, "max": 2}),
        )
        .await;
    if reply.status == 204 {
        return Vec::new();
    }
    assert_eq!(reply.status, 200, "claim: {}", reply.body);
    reply.body["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn claims_on_two_replicas_at_once_never_hold_two_overlapping_scopes() {
    let r = replicas(2).await;
    let (a, b) = (r.nodes[0].url.clone(), r.nodes[1].url.clone());
    let names: Vec<String> = (0..8).map(|i| format!("racer{i}")).collect();
    let mut agents = vec![("coordinator", "coordinator")];
    agents.extend(names.iter().map(|n| (n.as_str(), "tester")));
    let apis = team(&a, &agents).await;
    let coord = apis[0].clone();
    // Every other racer claims on the second replica.
    let racers: Vec<Api> = apis[1..]
        .iter()
        .enumerate()
        .map(|(i, api)| if i % 2 == 0 { api.clone() } else { on(api, &b) })
        .collect();
    // TEST-1NN overlap each other (`src/**`), two for each racer (its owner), so each claim
    // sees other tasks than the others' and only the lock keeps them apart; TEST-2NN have no
    // scope.
    let mut tasks: Vec<Value> = (0..16)
        .map(|i| {
            json!({"id": format!("TEST-1{i:02}"), "subject": "scoped",
                        "owner": names[i % 8],
                        "metadata": {"scope": ["src/**", format!("tests/t{i}.py")]}})
        })
        .collect();
    tasks.extend((0..6).map(|i| json!({"id": format!("TEST-2{i:02}"), "subject": "free"})));
    coord
        .post(&coord.t("/tasks"), Value::Array(tasks))
        .await
        .expect_status(201);
    let mut scoped_done = 0;
    for round in 0..40 {
        let got: Vec<Vec<String>> = futures::future::join_all(racers.iter().map(claim)).await;
        let scoped: Vec<&String> = got
            .iter()
            .flatten()
            .filter(|id| id.starts_with("TEST-1"))
            .collect();
        assert!(
            scoped.len() <= 1,
            "round {round}: two overlapping in progress: {scoped:?}"
        );
        scoped_done += scoped.len();
        for (racer, ids) in racers.iter().zip(&got) {
            for id in ids {
                racer
                    .post(&racer.t(&format!("/tasks/{id}/complete")), json!({}))
                    .await
                    .expect_status(200);
            }
        }
        if scoped_done == 16 {
            break;
        }
    }
    assert_eq!(
        scoped_done, 16,
        "every scoped task was taken, one at a time"
    );
}
