//! Every configurable limit, at the limit (accepted) and one past it (refused with the right
//! status and code).

use huddle_tests::sse::SseReader;
use huddle_tests::{Api, TestDaemon};
use reqwest::Method;
use serde_json::{json, Value};

/// A JSON object nested exactly `depth` levels: depth 1 is `{}`, 2 is `{"a":{}}`.
fn nested(depth: usize) -> Value {
    (1..depth).fold(json!({}), |inner, _| json!({ "a": inner }))
}

async fn limited() -> (TestDaemon, Api) {
    let d = TestDaemon::start_with(|s| {
        s.server.max_body_bytes = 4096;
        let l = &mut s.limits;
        l.max_page_size = 5;
        l.max_batch = 3;
        l.max_subject_chars = 10;
        l.max_text_chars = 20;
        l.max_summary_chars = 12;
        l.max_json_depth = 3;
        l.max_blocked_by = 2;
        l.max_message_bytes = 100;
        l.max_streams_per_token = 2;
        s.memory.max_bytes = 200;
    })
    .await;
    let c = d.team("qa").await;
    (d, c)
}

#[tokio::test]
async fn content_limits_accept_the_limit_and_refuse_one_past_it() {
    let (_d, c) = limited().await;
    let task = |subject: &str| json!({"prefix": "TEST", "subject": subject});
    c.post(&c.t("/tasks"), task(&"s".repeat(10)))
        .await
        .expect_status(201);
    c.post(&c.t("/tasks"), task(&"s".repeat(11)))
        .await
        .expect_error(400, "invalid_field");
    let described =
        |n: usize| json!({"prefix": "TEST", "subject": "d", "description": "x".repeat(n)});
    c.post(&c.t("/tasks"), described(20))
        .await
        .expect_status(201);
    c.post(&c.t("/tasks"), described(21))
        .await
        .expect_error(400, "invalid_field");
    c.post(&c.t("/tasks"), json!([task("a"), task("b"), task("c")]))
        .await
        .expect_status(201);
    c.post(
        &c.t("/tasks"),
        json!([task("a"), task("b"), task("c"), task("d")]),
    )
    .await
    .expect_error(400, "invalid_field");
    let with_meta = |m: Value| json!({"prefix": "TEST", "subject": "m", "metadata": m});
    c.post(&c.t("/tasks"), with_meta(nested(3)))
        .await
        .expect_status(201);
    c.post(&c.t("/tasks"), with_meta(nested(4)))
        .await
        .expect_error(400, "invalid_field");

    c.post(&c.t("/tasks"), json!([{"id": "DEP-001", "subject": "x"}, {"id": "DEP-002", "subject": "y"}, {"id": "DEP-003", "subject": "z"}]))
        .await
        .expect_status(201);
    c.post(
        &c.t("/tasks"),
        json!({"id": "DEP-010", "subject": "two", "blockedBy": ["DEP-001", "DEP-002"]}),
    )
    .await
    .expect_status(201);
    c.post(&c.t("/tasks"), json!({"id": "DEP-011", "subject": "three", "blockedBy": ["DEP-001", "DEP-002", "DEP-003"]}))
        .await
        .expect_error(400, "invalid_field");
    c.patch(&c.t("/tasks/DEP-010"), json!({"addBlockedBy": ["DEP-003"]}))
        .await
        .expect_error(400, "invalid_field");
    assert_eq!(
        c.get(&c.t("/tasks/DEP-010")).await.body["blockedBy"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    let post = |summary: String, data: Value| json!({"to": "*", "type": "impl_progress", "summary": summary, "data": data});
    c.post(&c.t("/messages"), post("s".repeat(12), json!({})))
        .await
        .expect_status(201);
    c.post(&c.t("/messages"), post("s".repeat(13), json!({})))
        .await
        .expect_error(400, "invalid_field");
    // {"p":"…"} is 8 bytes of JSON around the padding.
    c.post(
        &c.t("/messages"),
        post("ok".into(), json!({"p": "x".repeat(92)})),
    )
    .await
    .expect_status(201);
    c.post(
        &c.t("/messages"),
        post("ok".into(), json!({"p": "x".repeat(93)})),
    )
    .await
    .expect_error(413, "too_large");
    c.post(&c.t("/messages"), post("ok".into(), nested(3)))
        .await
        .expect_status(201);
    c.post(&c.t("/messages"), post("ok".into(), nested(4)))
        .await
        .expect_error(400, "invalid_field");
    c.post(
        &c.t("/tasks/TEST-001/fail"),
        json!({"reason": "r".repeat(21)}),
    )
    .await
    .expect_error(400, "invalid_field");
    c.post(
        &c.t("/tasks/TEST-001/fail"),
        json!({"reason": "r".repeat(20)}),
    )
    .await
    .expect_status(200);

    c.patch(&c.t("/memory"), nested(3)).await.expect_status(200);
    c.patch(&c.t("/memory"), nested(4))
        .await
        .expect_error(400, "invalid_field");
    // {"a":{"a":{}},"b":"…"} is 21 bytes around the padding: 200 exactly with 179.
    c.patch(&c.t("/memory"), json!({"b": "x".repeat(179)}))
        .await
        .expect_status(200);
    c.patch(&c.t("/memory"), json!({"b": "x".repeat(180)}))
        .await
        .expect_error(413, "too_large");
}

#[tokio::test]
async fn page_size_body_size_and_stream_count_have_limits() {
    let (d, c) = limited().await;
    c.get(&c.t("/tasks?limit=5")).await.expect_status(200);
    c.get(&c.t("/tasks?limit=6"))
        .await
        .expect_error(400, "invalid_field");
    c.get(&c.t("/messages?limit=6"))
        .await
        .expect_error(400, "invalid_field");
    // A body of exactly max_body_bytes is read; one byte more is 413.
    let body_of = |n: usize| {
        let pad = n - r#"{"prefix":"TEST","subject":"b","description":""}"#.len();
        format!(
            r#"{{"prefix":"TEST","subject":"b","description":"{}"}}"#,
            " ".repeat(pad)
        )
        .into_bytes()
    };
    let at = c
        .send(Method::POST, &c.t("/tasks"), Some(body_of(4096)), &[])
        .await;
    assert_ne!(at.status.as_u16(), 413, "{}", at.body); // read, then refused for its description length
    c.send(Method::POST, &c.t("/tasks"), Some(body_of(4097)), &[])
        .await
        .expect_error(413, "too_large");

    let url = format!("{}{}", d.url, c.t("/events"));
    let first = SseReader::open(&url, &c.token, None).await;
    let _second = SseReader::open(&url, &c.token, None).await;
    let third = c
        .get(&c.t("/events"))
        .await
        .expect_error(429, "too_many_streams");
    assert!(third.headers.contains_key("retry-after"));
    drop(first);
    huddle_tests::eventually(10, "a stream slot frees when a stream closes", || {
        let url = url.clone();
        let token = c.token.clone();
        async move {
            let res = reqwest::Client::new()
                .get(&url)
                .bearer_auth(&token)
                .send()
                .await
                .unwrap();
            res.status() == 200
        }
    })
    .await;
}

#[tokio::test]
async fn the_request_rate_per_token_is_limited_with_retry_after() {
    let d = TestDaemon::start_with(|s| {
        s.limits.requests_per_minute = 1;
        s.limits.burst = 3;
    })
    .await;
    let admin = d.admin();
    admin
        .post("/v1/teams", json!({"name": "qa"}))
        .await
        .expect_status(201);
    admin.get("/v1/teams/qa/agents").await.expect_status(200);
    admin.get("/v1/teams/qa/agents").await.expect_status(200);
    let limited = admin
        .get("/v1/teams/qa/agents")
        .await
        .expect_error(429, "rate_limited");
    let retry: u64 = limited.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry), "Retry-After {retry}");
    // Buckets are per token: a fresh token is not limited by the admin's.
    let other = Api::new(&d.url, "hud_unknown").in_team("qa");
    other
        .get(&other.t("/tasks"))
        .await
        .expect_error(401, "unauthorized");
}
