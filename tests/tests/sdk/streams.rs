//! The typed SSE consumer: replay, live items, filters, and resuming across a daemon restart
//! without gaps or repeats.

use futures::StreamExt;
use huddle_sdk::wire::{PostMessage, Role, TaskPatch};
use huddle_sdk::{Client, StreamOptions, Subscription};
use huddle_tests::clients;
use huddle_tests::TestDaemon;
use serde_json::json;
use std::time::Duration;

async fn say(client: &Client, to: &str, kind: &str, summary: &str) -> i64 {
    let post = PostMessage {
        to: to.into(),
        kind: kind.into(),
        summary: summary.into(),
        data: json!({}),
    };
    client.post_message(&post).await.expect("posted").seq
}

/// The next item, failing the test when none comes within a generous deadline.
async fn next<T>(s: &mut Subscription<T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), s.next())
        .await
        .expect("an item within 30 s")
        .expect("the stream goes on")
        .expect("a good item")
}

#[tokio::test]
async fn the_message_stream_replays_then_follows_with_filters() {
    let d = TestDaemon::start().await;
    let coord = clients::team(&d, "qa").await;
    let tester = clients::agent(&d, "qa", "tester-1", Role::Tester).await;
    say(&coord, "*", "note", "one").await;
    say(&tester, "coordinator", "test_result", "two").await;

    let mut all = coord.stream_messages(&StreamOptions::default()).unwrap();
    let mut results = coord
        .stream_messages(&StreamOptions {
            kind: Some("test_result".into()),
            ..Default::default()
        })
        .unwrap();
    let mut from_coord = coord
        .stream_messages(&StreamOptions {
            from: Some("coordinator".into()),
            after: Some(1),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(next(&mut all).await.summary, "one");
    assert_eq!(next(&mut all).await.summary, "two");
    assert_eq!(next(&mut results).await.summary, "two");

    say(&coord, "tester", "fix_required", "three").await;
    say(&tester, "coordinator", "test_result", "four").await;
    assert_eq!(next(&mut all).await.seq, 3);
    assert_eq!(next(&mut all).await.seq, 4);
    assert_eq!(next(&mut results).await.summary, "four");
    assert_eq!(
        next(&mut from_coord).await.summary,
        "three",
        "after=1 skips the first"
    );
}

#[tokio::test]
async fn the_event_stream_carries_typed_events_filtered_by_family() {
    let d = TestDaemon::start().await;
    let coord = clients::team(&d, "qa").await;
    let mut tasks = coord
        .stream_events(&StreamOptions {
            kind: Some("task.".into()),
            ..Default::default()
        })
        .unwrap();
    let mut everything = coord.stream_events(&StreamOptions::default()).unwrap();
    coord
        .create_task(&clients::task("TEST-001", "a"))
        .await
        .unwrap();
    say(&coord, "*", "note", "hello").await;
    coord.patch_memory(&json!({"k": 1}), None).await.unwrap();
    let rename = TaskPatch {
        subject: Some("b".into()),
        ..TaskPatch::default()
    };
    coord.update_task("TEST-001", &rename, None).await.unwrap();

    let first = next(&mut tasks).await;
    assert_eq!(
        (first.kind.as_str(), first.data["id"].as_str()),
        ("task.created", Some("TEST-001"))
    );
    assert_eq!(next(&mut tasks).await.kind, "task.updated");
    let mut seen = Vec::new();
    for _ in 0..5 {
        let e = next(&mut everything).await;
        seen.push((e.seq, e.kind));
    }
    let names: Vec<_> = seen.iter().map(|(_, k)| k.as_str()).collect();
    assert_eq!(
        names,
        [
            "agent.created",
            "task.created",
            "message.posted",
            "memory.updated",
            "task.updated"
        ]
    );
    assert!(
        seen.windows(2).all(|w| w[0].0 < w[1].0),
        "in sequence order"
    );
}

#[tokio::test]
async fn a_stream_resumes_across_a_daemon_restart_without_gaps_or_repeats() {
    let d = TestDaemon::start().await;
    let coord = clients::team(&d, "qa").await;
    let mut stream = coord.stream_messages(&StreamOptions::default()).unwrap();
    let mut events = coord
        .stream_events(&StreamOptions {
            kind: Some("message.posted".into()),
            ..Default::default()
        })
        .unwrap();
    for i in 1..=5 {
        say(&coord, "*", "note", &format!("before {i}")).await;
    }
    let mut seqs = Vec::new();
    for _ in 0..5 {
        seqs.push(next(&mut stream).await.seq);
    }
    for _ in 0..5 {
        next(&mut events).await;
    }

    let d = d.restart().await;
    for i in 1..=5 {
        say(&coord, "*", "note", &format!("after {i}")).await;
    }
    for _ in 0..5 {
        seqs.push(next(&mut stream).await.seq);
    }
    assert_eq!(seqs, (1..=10).collect::<Vec<i64>>(), "no gap, no repeat");
    let event = next(&mut events).await;
    assert_eq!(
        event.data["summary"], "after 1",
        "the event stream resumed at the right place"
    );

    say(&coord, "*", "note", "last").await;
    assert_eq!(next(&mut stream).await.seq, 11);
    drop(d);
}

/// The daemon's keep-alive comments (every second here) must count as life: an idle stream
/// stays on its first connection however long the team is quiet, and still delivers.
#[tokio::test]
async fn an_idle_stream_lives_on_keep_alives_without_reconnecting() {
    let d = TestDaemon::start_with(|s| s.streams.keepalive_secs = 1).await;
    let coord = clients::team(&d, "qa").await;
    let proxy = huddle_tests::proxy::Proxy::start(d.addr).await;
    let observer = clients::admin(&d)
        .with_team("qa")
        .create_agent("watcher", Role::Observer)
        .await
        .expect("observer created");
    let watcher = Client::builder(&proxy.url)
        .token(&observer.token)
        .team("qa")
        .build()
        .unwrap();
    let idle = Duration::from_secs(3);
    let mut stream = watcher
        .stream_messages(&StreamOptions {
            idle_timeout: Some(idle),
            ..Default::default()
        })
        .unwrap();
    say(&coord, "*", "note", "before the quiet").await;
    assert_eq!(next(&mut stream).await.summary, "before the quiet");
    let connections =
        |p: &huddle_tests::proxy::Proxy| p.connections.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(connections(&proxy), 1);

    // Three idle windows with nothing but keep-alives: a client blind to comments would have
    // dropped and reopened the stream at least twice by the end.
    let quiet = tokio::time::timeout(idle * 3, stream.next()).await;
    assert!(quiet.is_err(), "nothing was posted, so nothing arrives");
    assert_eq!(connections(&proxy), 1, "the stream reconnected while idle");

    say(&coord, "*", "note", "after the quiet").await;
    assert_eq!(next(&mut stream).await.summary, "after the quiet");
    assert_eq!(connections(&proxy), 1);
}
