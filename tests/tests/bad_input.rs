//! Every malformed request gets the one error shape with the right status and code, and the
//! database is exactly as it was before (checked on the SQLite file itself).

mod bad_input_table;

use bad_input_table::{cases, snapshot};
use huddle_tests::TestDaemon;
use reqwest::Method;
use serde_json::json;

#[tokio::test]
async fn malformed_requests_are_refused_clearly_and_change_nothing() {
    let d = TestDaemon::start_with(|s| s.server.max_body_bytes = 64 * 1024).await;
    let c = d.team("qa").await;
    let t = d.agent("qa", "tester", "tester").await;
    c.post(&c.t("/tasks"), json!([{"id": "TEST-001", "subject": "a"}, {"id": "TEST-002", "subject": "b", "blockedBy": ["TEST-001"]}]))
        .await
        .expect_status(201);
    c.post(&c.t("/tasks"), json!({"id": "TEST-003", "subject": "held"}))
        .await
        .expect_status(201);
    let held = t.claim(json!({})).await.unwrap();
    assert_eq!(held["id"], "TEST-001");
    c.patch(&c.t("/memory"), json!({"a": 1}))
        .await
        .expect_status(200);

    let huge = format!(
        "{{\"subject\": \"{}\", \"prefix\": \"TEST\"}}",
        "x".repeat(70 * 1024)
    );
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let cases = cases(&huge, &deep);

    let db = d.data_dir.join("huddle.db");
    let before = snapshot(&db);
    for case in cases {
        let path = c.t(case.path);
        let reply = c
            .send(
                case.method.clone(),
                &path,
                case.body.filter(|b| !b.is_empty()),
                &case.headers,
            )
            .await;
        assert_eq!(
            reply.status.as_u16(),
            case.status,
            "{}: {}",
            case.what,
            reply.body
        );
        assert_eq!(
            reply.body["error"]["code"], case.code,
            "{}: {}",
            case.what, reply.body
        );
        assert!(
            reply.body["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{}: no message",
            case.what
        );
        assert_eq!(snapshot(&db), before, "{} changed the database", case.what);
    }

    // Acting on a claim one does not hold, or a closed task, is a conflict.
    let other = d.agent("qa", "tester-2", "tester").await;
    let before = snapshot(&db);
    other
        .post(&other.t("/tasks/TEST-001/complete"), json!({}))
        .await
        .expect_error(409, "not_holder");
    other
        .post(&other.t("/tasks/TEST-001/heartbeat"), json!({}))
        .await
        .expect_error(409, "not_holder");
    other
        .post(&other.t("/tasks/TEST-001/release"), json!({}))
        .await
        .expect_error(409, "not_holder");
    other
        .post(&other.t("/tasks/TEST-404/complete"), json!({}))
        .await
        .expect_error(404, "not_found");
    other
        .post(
            &other.t("/tasks/TEST-001/complete"),
            json!({"result": 1, "extra": true}),
        )
        .await
        .expect_error(400, "invalid_field");
    // Another team's name in the path, and no token at all.
    d.admin()
        .post("/v1/teams", json!({"name": "Bad Name"}))
        .await
        .expect_error(400, "invalid_field");
    d.admin()
        .post("/v1/teams", json!({"name": "qa"}))
        .await
        .expect_error(409, "duplicate_team");
    d.admin()
        .post(
            "/v1/teams/qa/agents",
            json!({"name": "tester", "role": "tester"}),
        )
        .await
        .expect_error(409, "duplicate_agent");
    d.admin()
        .post("/v1/teams/qa/agents", json!({"name": "x", "role": "boss"}))
        .await
        .expect_error(400, "invalid_field");
    d.admin()
        .post(
            "/v1/teams/nope/agents",
            json!({"name": "x", "role": "tester"}),
        )
        .await
        .expect_error(404, "not_found");
    let anonymous = huddle_tests::Api::new(&d.url, "");
    let r = anonymous
        .send(
            Method::GET,
            "/v1/teams/qa/tasks",
            None,
            &[("Authorization", "Basic abc")],
        )
        .await;
    r.expect_error(401, "unauthorized");
    assert_eq!(snapshot(&db), before, "refused claims changed the database");
}
