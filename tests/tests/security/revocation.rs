//! Revocation under pressure: a first use racing the revoke, long polls waiting when the token
//! goes, and a stream that stopped reading while hundreds of other revocations happened.

use axum::body::Body;
use axum::http::Request;
use http_body_util::BodyExt;
use huddle_tests::{Api, TestDaemon};
use serde_json::{json, Value};
use std::time::Duration;
use tower::ServiceExt;

/// Rounds of the race that used to leave about one round in twenty with a live old token.
const ROUNDS: usize = 40;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_token_revoked_during_its_first_use_is_refused_afterwards() {
    // Up to 21 refused reads a round from one address: the failed-authentication limiter is
    // not what this test is about, so its burst is set past every round's failures.
    let d = TestDaemon::start_with(|s| {
        s.limits.failed_auth_burst = (ROUNDS as u64 + 1) * 21;
    })
    .await;
    let c = d.team("qa").await;
    for round in 0..ROUNDS {
        let name = format!("t{round}");
        let t = d.agent("qa", &name, "tester").await;
        // 20 first uses at once (all cache misses), the revoke landing among them.
        let reads: Vec<_> = (0..20)
            .map(|_| {
                let t = t.clone();
                tokio::spawn(async move { t.get(&t.t("/tasks")).await.status.as_u16() })
            })
            .collect();
        // A jitter so the revoke lands at different points of the reads, not a synchronisation.
        tokio::time::sleep(Duration::from_micros((round as u64 * 277) % 11_000)).await;
        c.post(&c.t(&format!("/agents/{name}/revoke")), json!({}))
            .await
            .expect_status(200);
        for read in reads {
            let status = read.await.unwrap();
            assert!(status == 200 || status == 401, "status {status}");
        }
        t.get(&t.t("/tasks"))
            .await
            .expect_error(401, "unauthorized");
    }
}

#[tokio::test]
async fn long_polls_of_a_revoked_token_end_with_401() {
    let d = TestDaemon::start_with(|s| s.tasks.max_wait_ms = 600_000).await;
    let c = d.team("qa").await;
    let t = d.agent("qa", "tester", "tester").await;
    let o = d.agent("qa", "watcher", "observer").await;
    t.get(&t.t("/tasks")).await.expect_status(200);
    o.get(&o.t("/tasks")).await.expect_status(200);
    let claim = {
        let t = t.clone();
        tokio::spawn(async move {
            t.post(
                &t.t("/tasks/claim"),
                json!({"prefixes": ["TEST"], "waitMs": 600_000}),
            )
            .await
        })
    };
    let inbox = {
        let o = o.clone();
        tokio::spawn(async move { o.get(&o.t("/inbox?waitMs=600000")).await })
    };
    c.post(&c.t("/agents/tester/revoke"), json!({}))
        .await
        .expect_status(200);
    c.post(&c.t("/agents/watcher/rotate"), json!({}))
        .await
        .expect_status(200);
    // Without the revocation both would wait ten minutes; the deadline only bounds the test.
    let deadline = Duration::from_secs(60);
    tokio::time::timeout(deadline, claim)
        .await
        .expect("the claim ended")
        .unwrap()
        .expect_error(401, "unauthorized");
    tokio::time::timeout(deadline, inbox)
        .await
        .expect("the inbox wait ended")
        .unwrap()
        .expect_error(401, "unauthorized");
}

/// One request to the in-process router; returns the status and the JSON body.
async fn call(app: &axum::Router, method: &str, path: &str, token: &str, body: Value) -> Value {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    assert!(status.is_success(), "{method} {path}: {status}");
    serde_json::from_slice(&bytes).unwrap_or(Value::Null)
}

/// Driven in process so "not reading" is exact: the stream's body is not polled at all while
/// its agent is revoked and 300 other tokens are rotated.
#[tokio::test]
async fn a_stalled_stream_ends_after_revocation_whatever_happened_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let settings = huddle_tests::test_settings(dir.path());
    let built = huddle_daemon::build(settings).await.unwrap();
    let app = huddle_daemon::http::app(built.state.clone());
    let admin = huddle_tests::ADMIN;
    for team in ["qa", "other"] {
        call(&app, "POST", "/v1/teams", admin, json!({"name": team})).await;
    }
    let add = |team: &'static str, name: &'static str, role: &'static str| {
        let app = app.clone();
        async move {
            let path = format!("/v1/teams/{team}/agents");
            let reply = call(
                &app,
                "POST",
                &path,
                admin,
                json!({"name": name, "role": role}),
            )
            .await;
            reply["token"].as_str().unwrap().to_string()
        }
    };
    let coordinator = add("qa", "coordinator", "coordinator").await;
    let tester = add("qa", "tester", "tester").await;
    add("other", "churn", "tester").await;

    let request = Request::get("/v1/teams/qa/messages/stream")
        .header("authorization", format!("Bearer {tester}"))
        .body(Body::empty())
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200);

    let post = |summary: &str| json!({"to": "*", "type": "impl_progress", "summary": summary});
    call(
        &app,
        "POST",
        "/v1/teams/qa/messages",
        &coordinator,
        post("before"),
    )
    .await;
    call(
        &app,
        "POST",
        "/v1/teams/qa/agents/tester/revoke",
        admin,
        json!({}),
    )
    .await;
    for _ in 0..300 {
        call(
            &app,
            "POST",
            "/v1/teams/other/agents/churn/rotate",
            admin,
            json!({}),
        )
        .await;
    }
    call(
        &app,
        "POST",
        "/v1/teams/qa/messages",
        &coordinator,
        post("after"),
    )
    .await;

    // Reading again: the stream must end, without the message posted after the revocation.
    let mut body = response.into_body();
    let mut text = String::new();
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(20), body.frame())
            .await
            .expect("the stream ended or sent within 20 s");
        match frame {
            None => break,
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    text.push_str(std::str::from_utf8(&data).unwrap());
                }
            }
            Some(Err(e)) => panic!("stream error: {e}"),
        }
        assert!(
            !text.contains("\"after\""),
            "a revoked stream delivered a later message: {text}"
        );
    }
    built.state.shutdown.cancel();
    built.store.close().await;
}

#[tokio::test]
async fn a_rotated_token_can_stream_while_the_old_one_cannot() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let t = d.agent("qa", "tester", "tester").await;
    let rotated = c
        .post(&c.t("/agents/tester/rotate"), json!({}))
        .await
        .expect_status(200);
    let fresh = Api::new(&d.url, rotated.body["token"].as_str().unwrap()).in_team("qa");
    let url = format!("{}{}", d.url, fresh.t("/messages/stream"));
    let mut stream = huddle_tests::sse::SseReader::open(&url, &fresh.token, None).await;
    c.post(
        &c.t("/messages"),
        json!({"to": "*", "type": "impl_progress", "summary": "hi"}),
    )
    .await
    .expect_status(201);
    let got = stream.take(1).await;
    assert_eq!(got[0].2["summary"], "hi");
    t.get(&t.t("/tasks"))
        .await
        .expect_error(401, "unauthorized");
}
