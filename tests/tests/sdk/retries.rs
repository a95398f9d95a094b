//! Retries: safe calls are retried (a keyed post is stored once even when its answer is lost),
//! unsafe ones are sent once, and a stopped daemon gives a clear error rather than a hang.

use huddle_sdk::wire::{ClaimRequest, NewTask, PostMessage, Role};
use huddle_sdk::{Client, Error, MessageQuery, TaskQuery};
use huddle_tests::clients;
use huddle_tests::proxy::Proxy;
use huddle_tests::TestDaemon;
use serde_json::json;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// A client acting as `like` but talking through `proxy`.
fn through(proxy: &Proxy, like: &Client, token: &str) -> Client {
    Client::builder(&proxy.url)
        .token(token)
        .team(like.team().unwrap())
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_stopped_daemon_gives_a_clear_error_not_a_hang() {
    let mut d = TestDaemon::start().await;
    let coord_api = d.team("qa").await;
    let coord = Client::new(&d.url, &coord_api.token)
        .unwrap()
        .with_team("qa");
    d.stop().await;

    let read = tokio::time::timeout(
        Duration::from_secs(30),
        coord.list_tasks(&TaskQuery::default()),
    )
    .await
    .expect("no hang")
    .unwrap_err();
    match &read {
        Error::Unreachable { url, attempts, .. } => {
            assert_eq!(url, &d.url);
            assert_eq!(*attempts, 4, "a read is retried");
        }
        other => panic!("expected Unreachable, got {other:?}"),
    }
    assert!(read.is_transient());
    let text = read.to_string();
    assert!(
        text.contains("cannot reach the huddle daemon") && text.contains(&d.url),
        "{text}"
    );

    let create = tokio::time::timeout(
        Duration::from_secs(30),
        coord.create_task(&clients::task("TEST-001", "x")),
    )
    .await
    .expect("no hang")
    .unwrap_err();
    assert!(
        matches!(create, Error::Unreachable { attempts: 1, .. }),
        "a create is sent once: {create:?}"
    );
}

#[tokio::test]
async fn a_post_whose_answer_is_lost_is_retried_and_stored_once() {
    let d = TestDaemon::start().await;
    let coord_api = d.team("qa").await;
    let coord = Client::new(&d.url, &coord_api.token)
        .unwrap()
        .with_team("qa");
    let proxy = Proxy::start(d.addr).await;
    let flaky = through(&proxy, &coord, &coord_api.token);

    proxy.lose_next_answers(1);
    let post = PostMessage {
        to: "*".into(),
        kind: "note".into(),
        summary: "exactly once".into(),
        data: json!({}),
    };
    let message = flaky
        .post_message(&post)
        .await
        .expect("retried until answered");
    assert!(
        proxy.connections.load(Ordering::SeqCst) >= 2,
        "the first answer was lost, so it retried"
    );
    let stored = coord
        .list_messages(&MessageQuery::default())
        .await
        .unwrap()
        .messages;
    assert_eq!(stored.len(), 1, "stored once: {stored:?}");
    assert_eq!(stored[0], message);
}

#[tokio::test]
async fn reads_and_heartbeats_are_retried_but_creates_are_sent_once() {
    let d = TestDaemon::start().await;
    let coord_api = d.team("qa").await;
    let coord = Client::new(&d.url, &coord_api.token)
        .unwrap()
        .with_team("qa");
    let tester_token = clients::admin(&d)
        .with_team("qa")
        .create_agent("tester-1", Role::Tester)
        .await
        .unwrap()
        .token;
    let tester = coord.with_token(&tester_token);
    let proxy = Proxy::start(d.addr).await;
    let flaky_coord = through(&proxy, &coord, &coord_api.token);

    proxy.lose_next_answers(1);
    let lost = flaky_coord
        .create_task(&NewTask {
            prefix: Some("TEST".into()),
            subject: "once".into(),
            ..NewTask::default()
        })
        .await
        .unwrap_err();
    assert!(
        matches!(lost, Error::Unreachable { attempts: 1, .. }),
        "{lost:?}"
    );
    let tasks = coord.list_all_tasks(&TaskQuery::default()).await.unwrap();
    assert_eq!(tasks.len(), 1, "not retried, so not created twice");

    proxy.lose_next_answers(1);
    let listed = flaky_coord
        .list_tasks(&TaskQuery::default())
        .await
        .expect("read retried");
    assert_eq!(listed.tasks.len(), 1);

    let task = tester
        .claim(&ClaimRequest::default())
        .await
        .unwrap()
        .expect("claimed");
    // A fresh client has no pooled connection, so its first request opens the one that loses.
    let flaky_tester = through(&proxy, &tester, &tester_token);
    let before = proxy.connections.load(Ordering::SeqCst);
    proxy.lose_next_answers(1);
    let beat = flaky_tester
        .heartbeat(&task.id, None)
        .await
        .expect("heartbeat retried");
    assert_eq!(beat.claimed_by.as_deref(), Some("tester-1"));
    assert!(
        proxy.connections.load(Ordering::SeqCst) >= before + 2,
        "the heartbeat was sent again"
    );
}
