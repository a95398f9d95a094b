//! A PostgreSQL outage, on a server of the test's own (`pg_server.rs`) that is stopped and
//! started again under two real `huddled` replicas: requests are answered 503 with
//! `Retry-After` at once rather than held, `/readyz` says unavailable, a lease that ran out
//! during the outage is still its holder's, and after the database returns both replicas serve
//! again and a stream on one sees the other's posts (its listener reconnected and caught up).
//! A replica started while the database is down says so and waits for it.

use huddle_tests::pg_server::PgServer;
use huddle_tests::process::HuddledProcess;
use huddle_tests::sse::SseReader;
use huddle_tests::Api;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

const ADMIN: &str = "outage-admin-token-0123456789abcdef";

/// Longer than any answer while the database is down may take: a 503, not a 30 s hang.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(5);

fn replica(url: &str) -> (HuddledProcess, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let node = HuddledProcess::start(
        dir.path(),
        &[
            ("HUDDLE_DATABASE_URL", url),
            ("HUDDLE_ADMIN_TOKEN", ADMIN),
            ("HUDDLE_TASKS_LEASE_SWEEP_MS", "50"),
            ("HUDDLE_TASKS_MIN_LEASE_MS", "50"),
            // The lease a holder cut off by the outage has after it.
            ("HUDDLE_TASKS_DEFAULT_LEASE_MS", "30000"),
        ],
    )
    .unwrap_or_else(|e| panic!("replica did not start: {e}"));
    (node, dir)
}

/// `method url` with the 5 s client timeout: the status, `Retry-After` and body.
async fn timed(
    method: reqwest::Method,
    url: &str,
    token: &str,
    body: Option<Value>,
) -> (u16, Option<String>, Value) {
    let client = reqwest::Client::builder()
        .timeout(CLIENT_TIMEOUT)
        .build()
        .unwrap();
    let mut request = client.request(method, url).bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let reply = request
        .send()
        .await
        .unwrap_or_else(|e| panic!("{url}: no answer within {CLIENT_TIMEOUT:?}: {e}"));
    let status = reply.status().as_u16();
    let retry_after = reply
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_string());
    let body = reply.json().await.unwrap_or(Value::Null);
    (status, retry_after, body)
}

/// Repeats `method url` until it answers something other than 503 (the database returning).
async fn once_served(method: reqwest::Method, url: &str, token: &str, body: Value) -> (u16, Value) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (status, _, reply) = timed(method.clone(), url, token, Some(body.clone())).await;
        if status != 503 {
            return (status, reply);
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{url} still 503 a minute after the database returned"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_stopped_database_is_answered_503_at_once_and_served_again_when_it_returns() {
    let server = Arc::new(PgServer::start());
    let url = server.url("postgres");
    let (a, _dir_a) = replica(&url);
    let (b, _dir_b) = replica(&url);
    let admin = Api::new(&a.url, ADMIN);
    admin
        .post("/v1/teams", json!({"name": "qa"}))
        .await
        .expect_status(201);
    let mut tokens = Vec::new();
    for name in ["coordinator", "tester"] {
        let r = admin
            .post("/v1/teams/qa/agents", json!({"name": name, "role": name}))
            .await
            .expect_status(201);
        tokens.push(r.body["token"].as_str().unwrap().to_string());
    }
    let coord = Api::new(&a.url, &tokens[0]).in_team("qa");
    let tester = Api::new(&a.url, &tokens[1]).in_team("qa");
    coord
        .post(
            &coord.t("/tasks"),
            json!({"id": "TEST-001", "subject": "s"}),
        )
        .await
        .expect_status(201);
    const LEASE: Duration = Duration::from_millis(3000);
    let claimed_at = tokio::time::Instant::now();
    let claimed = tester
        .claim(json!({"prefixes": ["TEST"], "leaseMs": LEASE.as_millis() as u64}))
        .await
        .expect("TEST-001 claimed");
    assert_eq!(claimed["id"], "TEST-001");

    // A stream on B that has seen the team's traffic before the outage.
    let stream_url = format!("{}/v1/teams/qa/messages/stream", b.url);
    let mut on_b = SseReader::open(&stream_url, &tokens[1], None).await;
    let post = json!({"to": "*", "type": "impl_progress", "summary": "before"});
    coord
        .post(&coord.t("/messages"), post)
        .await
        .expect_status(201);
    assert_eq!(on_b.take(1).await[0].2["summary"], "before");

    let stopping = server.clone();
    tokio::task::spawn_blocking(move || stopping.stop())
        .await
        .unwrap();

    // While it is down: 503 with the error shape and Retry-After, well within the timeout.
    let tasks_url = format!("{}/v1/teams/qa/tasks", a.url);
    let body = json!({"id": "TEST-002", "subject": "during the outage"});
    let asked = std::time::Instant::now();
    let (status, retry_after, reply) =
        timed(reqwest::Method::POST, &tasks_url, &tokens[0], Some(body)).await;
    // A figure for BENCHMARKS.md (shown with --no-capture), never asserted.
    eprintln!(
        "figure: 503 answered {} ms after the stop",
        asked.elapsed().as_millis()
    );
    assert_eq!(status, 503, "{reply}");
    assert_eq!(reply["error"]["code"], "store_unavailable", "{reply}");
    assert_eq!(retry_after.as_deref(), Some("1"));
    let list_on_b = format!("{}/v1/teams/qa/tasks", b.url);
    let (status, _, _) = timed(reqwest::Method::GET, &list_on_b, &tokens[0], None).await;
    assert_eq!(status, 503);
    for node in [&a, &b] {
        let (status, _, reply) = timed(
            reqwest::Method::GET,
            &format!("{}/readyz", node.url),
            "",
            None,
        )
        .await;
        assert_eq!(status, 503, "{reply}");
    }
    // The outage outlasts the lease: its holder could not heartbeat through it.
    tokio::time::sleep_until(claimed_at + LEASE + Duration::from_millis(1000)).await;

    let resuming = server.clone();
    tokio::task::spawn_blocking(move || resuming.resume())
        .await
        .unwrap();
    let resumed = std::time::Instant::now();

    for node in [&a, &b] {
        let ready = format!("{}/readyz", node.url);
        huddle_tests::eventually(60, "/readyz is 200 again", || {
            let ready = ready.clone();
            async move { timed(reqwest::Method::GET, &ready, "", None).await.0 == 200 }
        })
        .await;
    }
    // The lease is still the tester's: renewed when the database returned, not expired.
    let heartbeat = format!("{}/v1/teams/qa/tasks/TEST-001/heartbeat", a.url);
    let (status, reply) = once_served(
        reqwest::Method::POST,
        &heartbeat,
        &tokens[1],
        json!({"leaseMs": 60000}),
    )
    .await;
    assert_eq!(
        status, 200,
        "the holder lost its lease to the outage: {reply}"
    );
    assert_eq!(reply["claimedBy"], "tester");
    assert_eq!(reply["status"], "in_progress", "{reply}");
    eprintln!(
        "figure: /readyz 200 on both replicas and the holder's heartbeat served {} ms after the database accepted connections",
        resumed.elapsed().as_millis()
    );

    // A post on A reaches the stream on B: B's listener reconnected and caught up.
    let messages = format!("{}/v1/teams/qa/messages", a.url);
    let post = json!({"to": "*", "type": "impl_progress", "summary": "after"});
    let (status, reply) = once_served(reqwest::Method::POST, &messages, &tokens[0], post).await;
    assert_eq!(status, 201, "{reply}");
    let after = tokio::time::timeout(Duration::from_secs(60), on_b.take(1))
        .await
        .expect("B's stream got the post made on A after the outage");
    eprintln!(
        "figure: a post on A after the outage reached B's stream {} ms after the database accepted connections",
        resumed.elapsed().as_millis()
    );
    assert_eq!(after[0].2["summary"], "after");
    // And writes on both replicas work again.
    let (status, reply) = once_served(
        reqwest::Method::POST,
        &list_on_b,
        &tokens[0],
        json!({"id": "TEST-003", "subject": "after the outage"}),
    )
    .await;
    assert_eq!(status, 201, "{reply}");
}

#[tokio::test]
async fn a_replica_started_while_the_database_is_down_waits_for_it_and_says_so() {
    let server = PgServer::start();
    server.stop();
    let url = server.url("postgres");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_path_buf();
    let (node, said) = tokio::task::spawn_blocking(move || {
        let mut said = String::new();
        let node = HuddledProcess::start_watching(
            &data,
            &[],
            &[
                ("HUDDLE_DATABASE_URL", url.as_str()),
                ("HUDDLE_ADMIN_TOKEN", ADMIN),
            ],
            |line| {
                if said.is_empty() && line.contains("unreachable") {
                    said = line.to_string();
                    server.resume();
                }
            },
        );
        (node.map(|n| (n, server)), said)
    })
    .await
    .unwrap();
    let (node, _server) = node.unwrap_or_else(|e| panic!("the replica gave up: {e}"));
    assert!(said.contains("retrying"), "{said}");
    let admin = Api::new(&node.url, ADMIN);
    admin
        .post("/v1/teams", json!({"name": "qa"}))
        .await
        .expect_status(201);
}
