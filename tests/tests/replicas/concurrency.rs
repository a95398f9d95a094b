//! Claims and completions of one team take no team lock: two replicas completing blockers of
//! the same dependents at once, and writers on both replicas at once, keep dependency order,
//! exactly-once claims and gapless event and message sequences, as every stream sees them.

use super::{on, replicas, team};
use huddle_tests::sse::SseReader;
use huddle_tests::Api;
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// Claims up to `max` TEST tasks; their ids (none when nothing is ready).
async fn claim(api: &Api, max: usize) -> Vec<String> {
    let reply = api
        .post(
            &api.t("/tasks/claim"),
            json!({"prefixes": ["TEST"], "leaseMs": 600000, "max": max}),
        )
        .await;
    if reply.status == 204 {
        return Vec::new();
    }
    assert_eq!(reply.status, 200, "claim: {}", reply.body);
    ids(&reply.body["tasks"])
}

fn ids(tasks: &Value) -> Vec<String> {
    tasks
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| t["id"].as_str().expect("id").to_string())
        .collect()
}

async fn complete(api: &Api, ids: &[String]) {
    let items: Vec<Value> = ids.iter().map(|id| json!({"id": id})).collect();
    api.post(&api.t("/tasks/complete"), json!({"tasks": items}))
        .await
        .expect_status(200);
}

#[tokio::test]
async fn two_replicas_completing_the_blockers_of_shared_dependents_ready_each_once() {
    let r = replicas(2).await;
    let (a, b) = (r.nodes[0].url.clone(), r.nodes[1].url.clone());
    let apis = team(
        &a,
        &[
            ("coordinator", "coordinator"),
            ("left", "tester"),
            ("right", "tester"),
        ],
    )
    .await;
    let (coord, left, right) = (apis[0].clone(), apis[1].clone(), on(&apis[2], &b));
    // 40 dependents, each blocked by one "left" and one "right" blocker; the blockers are
    // created first so the left worker claims exactly the left ones.
    let n = 40;
    // Ids: TEST-1NN left blockers, TEST-2NN right blockers, TEST-3NN dependents.
    let blockers = |side: usize| -> Vec<Value> {
        (0..n)
            .map(|i| json!({"id": format!("TEST-{side}{i:02}"), "subject": "blocker"}))
            .collect()
    };
    for side in [1, 2] {
        coord
            .post(&coord.t("/tasks"), json!(blockers(side)))
            .await
            .expect_status(201);
    }
    let dependents: Vec<Value> = (0..n)
        .map(|i| {
            json!({"id": format!("TEST-3{i:02}"), "subject": "dependent",
                   "blockedBy": [format!("TEST-1{i:02}"), format!("TEST-2{i:02}")]})
        })
        .collect();
    coord
        .post(&coord.t("/tasks"), json!(dependents))
        .await
        .expect_status(201);
    // Oldest first: the left worker takes the L tasks, the right one (on B) the R tasks.
    let held_left = claim(&left, n).await;
    let held_right = claim(&right, n).await;
    assert!(held_left.iter().all(|id| id.starts_with("TEST-1")));
    assert!(held_right.iter().all(|id| id.starts_with("TEST-2")));
    assert_eq!((held_left.len(), held_right.len()), (n, n));
    // Each pair's two blockers are completed at once, one on each replica, a task at a time.
    let pairs = held_left.into_iter().zip(held_right).map(|(l, r)| {
        let (left, right) = (left.clone(), right.clone());
        async move {
            let (l, r) = ([l], [r]);
            tokio::join!(complete(&left, &l), complete(&right, &r))
        }
    });
    futures::future::join_all(pairs).await;
    // Every dependent is ready exactly once: workers on both replicas claim each of them once,
    // and then nothing is left.
    let mut claimed = Vec::new();
    let workers = [left.clone(), on(&left, &b), right.clone(), on(&right, &a)];
    loop {
        let rounds = workers.iter().map(|w| claim(w, 3));
        let got: Vec<String> = futures::future::join_all(rounds)
            .await
            .into_iter()
            .flatten()
            .collect();
        if got.is_empty() {
            break;
        }
        claimed.extend(got);
    }
    let distinct: BTreeSet<&String> = claimed.iter().collect();
    assert_eq!(
        distinct.len(),
        claimed.len(),
        "a dependent was claimed twice"
    );
    let expected: BTreeSet<String> = (0..n).map(|i| format!("TEST-3{i:02}")).collect();
    assert_eq!(
        distinct.into_iter().cloned().collect::<BTreeSet<_>>(),
        expected
    );
}

/// Writers on both replicas at once: claim → complete batches and message posts, by four
/// agents spread over the replicas.
async fn concurrent_writers(apis: &[Api], urls: &[String], tasks: usize) {
    let coord = &apis[0];
    let created: Vec<Value> = (0..tasks)
        .map(|i| json!({"id": format!("TEST-{i:04}"), "subject": "work"}))
        .collect();
    coord
        .post(&coord.t("/tasks"), json!(created))
        .await
        .expect_status(201);
    let mut writers = Vec::new();
    for (w, api) in apis[1..].iter().enumerate() {
        let api = on(api, &urls[w % urls.len()]);
        writers.push(tokio::spawn(async move {
            let mut round = 0;
            loop {
                let held = claim(&api, 1 + round % 4).await;
                if held.is_empty() {
                    return;
                }
                api.post(
                    &api.t("/messages"),
                    json!({"to": "*", "type": "impl_progress", "summary": format!("{round}")}),
                )
                .await
                .expect_status(201);
                complete(&api, &held).await;
                round += 1;
            }
        }));
    }
    for w in writers {
        w.await.expect("writer");
    }
}

/// `seqs` are exactly first, first + 1, …
fn assert_consecutive(seqs: &[i64], first: i64, what: &str) {
    let expected: Vec<i64> = (first..first + seqs.len() as i64).collect();
    assert_eq!(seqs, expected.as_slice(), "{what} are not consecutive");
}

#[tokio::test]
async fn sequences_stay_gapless_under_concurrent_writers_on_two_replicas() {
    let r = replicas(2).await;
    let urls: Vec<String> = r.nodes.iter().map(|n| n.url.clone()).collect();
    let roles = [
        ("coordinator", "coordinator"),
        ("w1", "tester"),
        ("w2", "tester"),
        ("w3", "tester"),
        ("w4", "tester"),
    ];
    let apis = team(&urls[0], &roles).await;
    concurrent_writers(&apis, &urls, 120).await;
    // Every event from the start, replayed from the database on a fresh stream of each
    // replica, up to a last message posted after the writers finished.
    let coord = &apis[0];
    let last = coord
        .post(
            &coord.t("/messages"),
            json!({"to": "*", "type": "impl_progress", "summary": "last"}),
        )
        .await
        .expect_status(201);
    let last_msg = last.body["seq"].as_i64().expect("seq");
    for url in &urls {
        let api = on(coord, url);
        let listed = api
            .get(&api.t("/messages?limit=1000"))
            .await
            .expect_status(200);
        let msgs: Vec<i64> = listed.body["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .map(|m| m["seq"].as_i64().expect("seq"))
            .collect();
        assert_consecutive(&msgs, 1, "message sequences");
        assert_eq!(msgs.last(), Some(&last_msg));
        let events = read_events_until_last(&api, None).await;
        assert_consecutive(&events, 1, "event sequences");
    }
}

/// The ids a fresh events stream on `api`'s replica delivers, up to the `message.posted` of
/// the message "last".
async fn read_events_until_last(api: &Api, reader: Option<SseReader>) -> Vec<i64> {
    let mut reader = match reader {
        Some(r) => r,
        None => {
            let url = format!("{}{}", api.base, api.t("/events"));
            SseReader::open(&url, &api.token, None).await
        }
    };
    let mut seqs = Vec::new();
    loop {
        let e = reader.next().await.expect("the stream ended early");
        seqs.push(e.id.parse::<i64>().expect("numeric id"));
        let data: Value = serde_json::from_str(&e.data).expect("json data");
        assert_eq!(
            data["seq"],
            json!(seqs[seqs.len() - 1]),
            "the frame's id is its seq"
        );
        if e.event == "message.posted" && data["data"]["summary"] == "last" {
            return seqs;
        }
    }
}

#[tokio::test]
async fn a_live_stream_never_sees_a_sequence_before_the_one_under_it() {
    let r = replicas(2).await;
    let urls: Vec<String> = r.nodes.iter().map(|n| n.url.clone()).collect();
    let roles = [
        ("coordinator", "coordinator"),
        ("w1", "tester"),
        ("w2", "tester"),
        ("w3", "tester"),
        ("w4", "tester"),
    ];
    let apis = team(&urls[0], &roles).await;
    // Streams open on both replicas before the writers start: what they see is live delivery
    // (the listener's reads after each commit), not a replay.
    let coord = &apis[0];
    let mut readers = Vec::new();
    for url in &urls {
        let api = on(coord, url);
        let stream = format!("{}{}", api.base, api.t("/events"));
        readers.push((
            api.clone(),
            SseReader::open(&stream, &api.token, None).await,
        ));
    }
    concurrent_writers(&apis, &urls, 120).await;
    coord
        .post(
            &coord.t("/messages"),
            json!({"to": "*", "type": "impl_progress", "summary": "last"}),
        )
        .await
        .expect_status(201);
    for (api, reader) in readers {
        let seqs = read_events_until_last(&api, Some(reader)).await;
        assert_consecutive(&seqs, 1, "live event sequences");
    }
}
