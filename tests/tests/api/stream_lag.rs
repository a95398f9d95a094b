//! A subscriber that does not read falls behind the bounded buffer without slowing anyone; when
//! it reads again it is told it lagged and catches up from the database, losing nothing.
//! Driven in process so "not reading" is exact: the SSE body is not polled at all.

use axum::body::Body;
use axum::http::Request;
use http_body_util::BodyExt;
use huddle_daemon::store::Caller;
use huddle_sdk::wire::{PostMessage, Role};
use tower::ServiceExt;

#[tokio::test]
async fn a_stuck_subscriber_lags_then_catches_up_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = huddle_tests::test_settings(dir.path());
    settings.streams.buffer = 16;
    let built = huddle_daemon::build(settings).await.unwrap();
    let store = built.state.store.clone();
    store.create_team("qa").await.unwrap();
    let team_id = store.team_id("qa").await.unwrap();
    let token = huddle_daemon::identity::new_token();
    store
        .create_agent(
            team_id,
            "coordinator",
            Role::Coordinator,
            &huddle_daemon::identity::hash_token(&token),
        )
        .await
        .unwrap();
    let caller = Caller {
        team_id,
        team: "qa".into(),
        agent: "coordinator".into(),
        role: Role::Coordinator,
    };

    let app = huddle_daemon::http::app(built.state.clone());
    let request = Request::get("/v1/teams/qa/messages/stream")
        .header("authorization", format!("Bearer {token}"))
        .body(Body::empty())
        .unwrap();
    let response = app.oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200);

    // 200 posts while the subscriber reads nothing: every post completes.
    for i in 0..200 {
        let post = PostMessage {
            to: "*".into(),
            kind: "impl_progress".into(),
            summary: format!("m{i}"),
            data: serde_json::Value::Null,
        };
        store.post_message(&caller, post, None).await.unwrap();
    }

    let mut body = response.into_body();
    let mut text = String::new();
    let mut ids = Vec::new();
    let mut lag_notices = 0;
    while ids.len() < 200 {
        let frame = tokio::time::timeout(std::time::Duration::from_secs(20), body.frame())
            .await
            .expect("frame in time");
        let Some(Ok(frame)) = frame else {
            panic!("stream ended after {} events", ids.len())
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        text.push_str(std::str::from_utf8(&data).unwrap());
        while let Some(end) = text.find("\n\n") {
            let block: String = text.drain(..end + 2).collect();
            if block.starts_with(": fell") {
                lag_notices += 1;
            }
            if let Some(id) = block.lines().find_map(|l| l.strip_prefix("id: ")) {
                ids.push(id.parse::<i64>().unwrap());
            }
        }
    }
    assert_eq!(
        ids,
        (1..=200).collect::<Vec<_>>(),
        "all messages, in order, once"
    );
    // The lag is noticed when the live feed is first read, after the database catch-up.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    while lag_notices == 0 && tokio::time::Instant::now() < deadline {
        let Ok(Some(Ok(frame))) =
            tokio::time::timeout(std::time::Duration::from_secs(20), body.frame()).await
        else {
            break;
        };
        if let Ok(data) = frame.into_data() {
            lag_notices += std::str::from_utf8(&data)
                .unwrap()
                .matches(": fell")
                .count();
        }
    }
    assert_eq!(lag_notices, 1, "the subscriber was told it fell behind");
    built.state.shutdown.cancel();
    built.store.close().await;
}
