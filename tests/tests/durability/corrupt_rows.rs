//! A row the daemon cannot read is an error, never a guess: a task whose stored status no
//! version of huddle writes answers 500 `internal` (details only in the log), instead of being
//! read as `pending` and handed out again.

use huddle_tests::TestDaemon;
use serde_json::json;

#[tokio::test]
async fn an_unknown_stored_status_is_an_internal_error_not_a_pending_task() {
    let mut d = TestDaemon::start().await;
    let coord = d.team("qa").await;
    coord
        .post(
            &coord.t("/tasks"),
            json!({"id": "TEST-001", "subject": "a"}),
        )
        .await
        .expect_status(201);
    coord
        .post(
            &coord.t("/tasks"),
            json!({"id": "TEST-002", "subject": "b"}),
        )
        .await
        .expect_status(201);
    d.stop().await;
    let db = rusqlite::Connection::open(d.data_dir.join("huddle.db")).unwrap();
    let changed = db
        .execute(
            "update tasks set status = 'paused' where id = 'TEST-001'",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(db);

    let _running = d.restart().await;
    let reply = coord
        .get(&coord.t("/tasks/TEST-001"))
        .await
        .expect_status(500);
    assert_eq!(reply.body["error"]["code"], "internal");
    assert!(
        !reply.body.to_string().contains("paused"),
        "internal detail leaked: {}",
        reply.body
    );
    coord.get(&coord.t("/tasks")).await.expect_status(500);
    // The healthy task is untouched and nothing claims the unreadable one.
    coord
        .get(&coord.t("/tasks/TEST-002"))
        .await
        .expect_status(200);
}
