//! Input the API must not be lenient about: data after a JSON body, task results nested too
//! deep, bodies sent to another team's routes, query strings in logs, and how task ids are
//! spelled.

use huddle_tests::TestDaemon;
use reqwest::Method;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

fn nested(depth: usize) -> Value {
    (1..depth).fold(json!({}), |inner, _| json!({ "a": inner }))
}

#[tokio::test]
async fn data_after_a_json_body_is_refused() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    for body in [
        r#"{"prefix": "TEST", "subject": "s"} xyz"#,
        r#"{"prefix": "TEST", "subject": "s"}{"prefix": "TEST", "subject": "t"}"#,
        r#"[{"prefix": "TEST", "subject": "s"}] 1"#,
    ] {
        c.send(Method::POST, &c.t("/tasks"), Some(body.into()), &[])
            .await
            .expect_error(400, "invalid_json");
    }
    let message = r#"{"to": "*", "type": "impl_progress", "summary": "s"} xyz"#;
    c.send(Method::POST, &c.t("/messages"), Some(message.into()), &[])
        .await
        .expect_error(400, "invalid_json");
    c.send(
        Method::PATCH,
        &c.t("/memory"),
        Some(r#"{"a": 1} xyz"#.into()),
        &[],
    )
    .await
    .expect_error(400, "invalid_json");
    // Trailing whitespace is fine, and nothing above was stored.
    let body = "{\"prefix\": \"TEST\", \"subject\": \"s\"}\n  ";
    let created = c
        .send(Method::POST, &c.t("/tasks"), Some(body.into()), &[])
        .await
        .expect_status(201);
    assert_eq!(created.body["id"], "TEST-001");
}

#[tokio::test]
async fn a_task_result_nested_past_the_depth_limit_is_refused() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    c.post(
        &c.t("/tasks"),
        json!([{"id": "TEST-001", "subject": "a"}, {"id": "TEST-002", "subject": "b"}]),
    )
    .await
    .expect_status(201);
    c.claim(json!({"prefixes": ["TEST"], "max": 2}))
        .await
        .unwrap();
    c.post(
        &c.t("/tasks/TEST-001/complete"),
        json!({"result": nested(33)}),
    )
    .await
    .expect_error(400, "invalid_field");
    let batch = json!({"tasks": [{"id": "TEST-002", "result": nested(33)}]});
    c.post(&c.t("/tasks/complete"), batch)
        .await
        .expect_error(400, "invalid_field");
    c.post(
        &c.t("/tasks/TEST-001/complete"),
        json!({"result": nested(32)}),
    )
    .await
    .expect_status(200);
}

#[tokio::test]
async fn a_body_sent_with_another_teams_token_gets_404_before_it_is_read() {
    let d = TestDaemon::start().await;
    d.team("qa").await;
    let other = d.team("beta").await.in_team("qa");
    let junk = Some(b"{not json".to_vec());
    for (method, path) in [
        (Method::POST, "/agents"),
        (Method::POST, "/tasks"),
        (Method::POST, "/tasks/claim"),
        (Method::POST, "/tasks/complete"),
        (Method::PATCH, "/tasks/TEST-001"),
        (Method::POST, "/tasks/TEST-001/complete"),
        (Method::POST, "/messages"),
        (Method::POST, "/messages/batch"),
        (Method::PATCH, "/memory"),
        (Method::PUT, "/memory"),
        (Method::POST, "/inbox/ack"),
    ] {
        let reply = other
            .send(method.clone(), &other.t(path), junk.clone(), &[])
            .await;
        assert_eq!(
            (reply.status.as_u16(), reply.body["error"]["code"].as_str()),
            (404, Some("not_found")),
            "{method} {path}: {}",
            reply.body
        );
    }
}

/// What docs/ARCHITECTURE.md says: `TEST-1` and `TEST-001` cannot both exist (uniqueness is on
/// prefix and number), and a task answers to the spelling it was created with, on every path.
#[tokio::test]
async fn a_task_answers_to_the_spelling_it_was_created_with() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let created = c
        .post(&c.t("/tasks"), json!({"id": "TEST-1", "subject": "first"}))
        .await
        .expect_status(201);
    assert_eq!(created.body["id"], "TEST-1");
    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-001", "subject": "again"}),
    )
    .await
    .expect_error(409, "duplicate_id");
    c.get(&c.t("/tasks/TEST-1")).await.expect_status(200);
    c.get(&c.t("/tasks/TEST-001"))
        .await
        .expect_error(404, "not_found");
    c.patch(&c.t("/tasks/TEST-1"), json!({"subject": "renamed"}))
        .await
        .expect_status(200);
    c.patch(&c.t("/tasks/TEST-001"), json!({"subject": "renamed"}))
        .await
        .expect_error(404, "not_found");
    // Auto-numbered ids are zero-padded to three digits and continue after explicit ones.
    let next = c
        .post(
            &c.t("/tasks"),
            json!({"prefix": "TEST", "subject": "auto", "blockedBy": ["TEST-1"]}),
        )
        .await
        .expect_status(201);
    assert_eq!(next.body["id"], "TEST-002");
    assert_eq!(next.body["blockedBy"], json!(["TEST-1"]));
    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-3", "subject": "s", "blockedBy": ["TEST-001"]}),
    )
    .await
    .expect_error(400, "invalid_field");
    c.patch(
        &c.t("/tasks/TEST-002"),
        json!({"addBlockedBy": ["TEST-01"]}),
    )
    .await
    .expect_error(400, "invalid_field");
}

/// Log lines written by the daemon while the guard lives (this test runs on one thread, so
/// the daemon's tasks log through the thread's default subscriber).
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "current_thread")]
async fn query_strings_are_not_logged() {
    use tracing_subscriber::util::SubscriberInitExt;
    let logs = Captured::default();
    let writer = logs.clone();
    let _guard = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("debug"))
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish()
        .set_default();
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    c.get(&c.t("/tasks?token=hud_secret_in_the_url&limit=5"))
        .await
        .expect_error(400, "invalid_query");
    c.get(&c.t("/messages/stream?access_token=hud_another_secret"))
        .await
        .expect_error(400, "invalid_query");
    let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(
        text.contains("/v1/teams/qa/tasks"),
        "requests were logged: {text}"
    );
    assert!(!text.contains("hud_secret_in_the_url"), "{text}");
    assert!(!text.contains("hud_another_secret"), "{text}");
    assert!(!text.contains(&c.token), "a token was logged");
}
