//! Who may do what, over real HTTP: every role against every kind of request, token revocation
//! and rotation (open streams included), and team isolation for the admin-shared routes.

use huddle_tests::sse::SseReader;
use huddle_tests::{Api, TestDaemon};
use reqwest::Method;
use serde_json::json;

/// One request per action; `true` where the role may do it (the matrix in `http/authz.rs`).
fn requests() -> Vec<(
    &'static str,
    Method,
    &'static str,
    serde_json::Value,
    [bool; 4],
)> {
    // Columns: coordinator, tester, executor, observer.
    vec![
        (
            "list agents",
            Method::GET,
            "/agents",
            json!(null),
            [true, true, true, true],
        ),
        (
            "add agent",
            Method::POST,
            "/agents",
            json!({"name": "new-one", "role": "tester"}),
            [true, false, false, false],
        ),
        (
            "create task",
            Method::POST,
            "/tasks",
            json!({"prefix": "IMPL", "subject": "s"}),
            [true, false, false, false],
        ),
        (
            "edit task",
            Method::PATCH,
            "/tasks/TEST-001",
            json!({"subject": "x"}),
            [true, false, false, false],
        ),
        (
            "read tasks",
            Method::GET,
            "/tasks",
            json!(null),
            [true, true, true, true],
        ),
        (
            "claim",
            Method::POST,
            "/tasks/claim",
            json!({"prefixes": ["NONE"]}),
            [true, true, true, false],
        ),
        (
            "heartbeat",
            Method::POST,
            "/tasks/TEST-001/heartbeat",
            json!({}),
            [true, true, true, false],
        ),
        (
            "post message",
            Method::POST,
            "/messages",
            json!({"to": "*", "type": "impl_progress", "summary": "s"}),
            [true, true, true, false],
        ),
        (
            "read messages",
            Method::GET,
            "/messages",
            json!(null),
            [true, true, true, true],
        ),
        (
            "read inbox",
            Method::GET,
            "/inbox",
            json!(null),
            [true, true, true, true],
        ),
        (
            "ack inbox",
            Method::POST,
            "/inbox/ack",
            json!({"seq": 0}),
            [true, true, true, true],
        ),
        (
            "read memory",
            Method::GET,
            "/memory",
            json!(null),
            [true, true, true, true],
        ),
        (
            "patch memory",
            Method::PATCH,
            "/memory",
            json!({"k": 1}),
            [true, true, true, false],
        ),
        (
            "replace memory",
            Method::PUT,
            "/memory",
            json!({"doc": {}}),
            [true, false, false, false],
        ),
        (
            "revoke agent",
            Method::POST,
            "/agents/nobody/revoke",
            json!({}),
            [true, false, false, false],
        ),
    ]
}

#[tokio::test]
async fn each_role_may_do_exactly_what_the_matrix_says() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    c.post(&c.t("/tasks"), json!({"id": "TEST-001", "subject": "s"}))
        .await
        .expect_status(201);
    let roles = [
        c.clone(),
        d.agent("qa", "tester", "tester").await,
        d.agent("qa", "executor", "executor").await,
        d.agent("qa", "watcher", "observer").await,
    ];
    for (what, method, path, body, may) in requests() {
        for (api, allowed) in roles.iter().zip(may) {
            let body = (!body.is_null()).then(|| body.to_string().into_bytes());
            let reply = api.send(method.clone(), &api.t(path), body, &[]).await;
            if allowed {
                assert_ne!(
                    reply.status.as_u16(),
                    403,
                    "{what} should be allowed: {}",
                    reply.body
                );
                assert!(reply.status.as_u16() < 500, "{what}: {}", reply.body);
            } else {
                let r = reply.expect_error(403, "forbidden");
                assert!(
                    r.body["error"]["message"]
                        .as_str()
                        .unwrap()
                        .contains("may not"),
                    "{what}: {}",
                    r.body
                );
            }
        }
    }
    for stream in ["/events", "/messages/stream"] {
        for api in &roles {
            SseReader::open(&format!("{}{}", d.url, api.t(stream)), &api.token, None).await;
        }
    }
    // The admin manages teams and agents, and nothing inside a team.
    let admin = d.admin().in_team("qa");
    admin.get(&admin.t("/agents")).await.expect_status(200);
    admin
        .get(&admin.t("/tasks"))
        .await
        .expect_error(403, "forbidden");
    admin
        .get(&admin.t("/memory"))
        .await
        .expect_error(403, "forbidden");
    c.post("/v1/teams", json!({"name": "other"}))
        .await
        .expect_error(403, "forbidden");
}

#[tokio::test]
async fn a_revoked_token_is_refused_at_once_and_its_streams_end() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let t = d.agent("qa", "tester", "tester").await;
    t.get(&t.t("/tasks")).await.expect_status(200); // cached now
    let mut stream = SseReader::open(&format!("{}{}", d.url, t.t("/events")), &t.token, None).await;
    stream.take(2).await; // the two agent.created events
    let revoked = c
        .post(&c.t("/agents/tester/revoke"), json!({}))
        .await
        .expect_status(200);
    assert_eq!(revoked.body["name"], "tester");
    t.get(&t.t("/tasks"))
        .await
        .expect_error(401, "unauthorized");
    // The revocation's own `agent.revoked` event may arrive first; then the stream ends.
    let mut after = Vec::new();
    while let Some(event) = stream.next().await {
        after.push(event.event);
        assert!(
            after.len() <= 1,
            "the stream went on after the revocation: {after:?}"
        );
    }
    assert!(after.iter().all(|e| e == "agent.revoked"), "{after:?}");
    c.post(&c.t("/agents/ghost/revoke"), json!({}))
        .await
        .expect_error(404, "not_found");
    // The name stays taken: history refers to it.
    d.admin()
        .post(
            "/v1/teams/qa/agents",
            json!({"name": "tester", "role": "tester"}),
        )
        .await
        .expect_error(409, "duplicate_agent");
}

#[tokio::test]
async fn a_rotated_token_replaces_the_old_one() {
    let d = TestDaemon::start().await;
    d.team("qa").await;
    let t = d.agent("qa", "tester", "tester").await;
    t.get(&t.t("/tasks")).await.expect_status(200);
    let rotated = d
        .admin()
        .post("/v1/teams/qa/agents/tester/rotate", json!({}))
        .await
        .expect_status(200);
    let new_token = rotated.body["token"].as_str().unwrap();
    assert_ne!(new_token, t.token);
    t.get(&t.t("/tasks"))
        .await
        .expect_error(401, "unauthorized");
    let fresh = Api::new(&d.url, new_token).in_team("qa");
    fresh.get(&fresh.t("/tasks")).await.expect_status(200);
    // Another team's coordinator cannot touch this team's agents.
    let other = d.team("beta").await;
    other
        .post("/v1/teams/qa/agents/tester/revoke", json!({}))
        .await
        .expect_error(404, "not_found");
}
