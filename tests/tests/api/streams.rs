//! Live streams: SSE order, resume with Last-Event-ID, filters, lagging subscribers, shutdown.

use futures::StreamExt;
use huddle_tests::sse::SseReader;
use huddle_tests::TestDaemon;
use serde_json::json;

async fn post_n(api: &huddle_tests::Api, from: usize, to: usize) {
    for i in from..to {
        api.post(
            &api.t("/messages"),
            json!({"to": "*", "type": "impl_progress", "summary": format!("step {i}")}),
        )
        .await
        .expect_status(201);
    }
}

#[tokio::test]
async fn the_message_stream_delivers_in_order_and_resumes_without_loss_or_repeat() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let url = format!("{}{}", d.url, c.t("/messages/stream"));
    post_n(&c, 0, 10).await; // history before the stream opens
    let mut first = SseReader::open(&url, &c.token, None).await;
    let poster = c.clone();
    let posting = tokio::spawn(async move { post_n(&poster, 10, 30).await });
    let got = first.take(20).await;
    assert!(got.iter().all(|(_, event, _)| event == "message"));
    assert_eq!(
        got.iter().map(|g| g.0).collect::<Vec<_>>(),
        (1..=20).collect::<Vec<_>>()
    );
    assert_eq!(got[0].2["summary"], "step 0");
    drop(first);
    posting.await.unwrap();
    post_n(&c, 30, 40).await;
    let mut resumed = SseReader::open(&url, &c.token, Some(20)).await;
    let rest = resumed.take(20).await;
    assert_eq!(
        rest.iter().map(|g| g.0).collect::<Vec<_>>(),
        (21..=40).collect::<Vec<_>>()
    );
    assert_eq!(rest[19].2["summary"], "step 39");
}

#[tokio::test]
async fn streams_filter_by_type_sender_and_recipient() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let t = d.agent("qa", "tester", "tester").await;
    let url = format!(
        "{}{}?type=test_result&from=tester",
        d.url,
        c.t("/messages/stream")
    );
    let mut filtered = SseReader::open(&url, &c.token, None).await;
    c.post(
        &c.t("/messages"),
        json!({"to": "tester", "type": "test_result", "summary": "not from tester"}),
    )
    .await
    .expect_status(201);
    t.post(
        &t.t("/messages"),
        json!({"to": "coordinator", "type": "impl_progress", "summary": "wrong type"}),
    )
    .await
    .expect_status(201);
    t.post(
        &t.t("/messages"),
        json!({"to": "coordinator", "type": "test_result", "summary": "this one"}),
    )
    .await
    .expect_status(201);
    let got = filtered.take(1).await;
    assert_eq!(
        (got[0].0, got[0].2["summary"].as_str()),
        (3, Some("this one"))
    );

    let events_url = format!("{}{}?type=task.*", d.url, c.t("/events"));
    let mut tasks_only = SseReader::open(&events_url, &c.token, None).await;
    c.post(&c.t("/tasks"), json!({"id": "TEST-001", "subject": "s"}))
        .await
        .expect_status(201);
    c.patch(&c.t("/memory"), json!({"a": 1}))
        .await
        .expect_status(200);
    t.claim(json!({})).await.unwrap();
    let got = tasks_only.take(2).await;
    assert_eq!(got[0].1, "task.created");
    assert_eq!(got[1].1, "task.claimed");
    assert_eq!(got[1].2["data"]["claimedBy"], "tester");
}

#[tokio::test]
async fn the_event_stream_resumes_from_last_event_id() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    for i in 1..=5 {
        c.post(
            &c.t("/tasks"),
            json!({"id": format!("TEST-{i:03}"), "subject": "s"}),
        )
        .await
        .expect_status(201);
    }
    let url = format!("{}{}", d.url, c.t("/events"));
    let mut all = SseReader::open(&url, &c.token, None).await;
    let got = all.take(6).await; // agent.created + 5 task.created
    assert_eq!(
        got.iter().map(|g| g.0).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5, 6]
    );
    let mut resumed = SseReader::open(&url, &c.token, Some(4)).await;
    let got = resumed.take(2).await;
    assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), [5, 6]);
    assert_eq!(got[1].2["data"]["id"], "TEST-005");
}

#[tokio::test]
async fn open_streams_end_when_the_daemon_shuts_down() {
    let mut d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let mut stream = SseReader::open(&format!("{}{}", d.url, c.t("/events")), &c.token, None).await;
    stream.take(1).await;
    d.stop().await; // returns only once in-flight requests (the stream) finished
    assert!(stream.next().await.is_none(), "the stream ended");
}

#[tokio::test]
async fn a_stream_following_one_recipient_gets_exactly_its_messages_across_reconnects() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    d.agent("qa", "alice", "tester").await;
    d.agent("qa", "bob", "tester").await;
    let url = format!("{}{}?to=alice", d.url, c.t("/messages/stream"));
    let mut alice = SseReader::open(&url, &c.token, None).await;
    for i in 0..30 {
        let to = if i % 2 == 0 { "alice" } else { "bob" };
        c.post(
            &c.t("/messages"),
            json!({"to": to, "type": "fix_required", "summary": format!("m{i}")}),
        )
        .await
        .expect_status(201);
    }
    let got = alice.take(10).await;
    let want: Vec<i64> = (0..10).map(|k| 2 * k + 1).collect();
    assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), want);
    assert!(got.iter().all(|g| g.2["to"] == "alice"));
    drop(alice);
    let mut resumed = SseReader::open(&url, &c.token, Some(19)).await;
    let rest = resumed.take(5).await;
    assert_eq!(
        rest.iter().map(|g| g.0).collect::<Vec<_>>(),
        [21, 23, 25, 27, 29]
    );
}

#[tokio::test]
async fn stream_frames_are_plain_sse_with_keep_alive_comments_when_idle() {
    let d = TestDaemon::start_with(|s| s.streams.keepalive_secs = 1).await;
    let c = d.team("qa").await;
    c.post(
        &c.t("/messages"),
        json!({"to": "*", "type": "note", "summary": "line one\nline two"}),
    )
    .await
    .expect_status(201);
    let res = reqwest::Client::new()
        .get(format!("{}{}", c.base, c.t("/messages/stream")))
        .bearer_auth(&c.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["content-type"], "text/event-stream");
    assert_eq!(res.headers()["cache-control"], "no-cache");
    let mut body = res.bytes_stream();
    let mut text = String::new();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    // The stored message first, then (nothing else happening) a keep-alive comment.
    while !text.contains("\n\n:\n\n") {
        let chunk = tokio::time::timeout_at(deadline, body.next())
            .await
            .expect("a keep-alive within 20 s")
            .expect("stream open")
            .unwrap();
        text.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    let (first, _) = text.split_once("\n\n").unwrap();
    let lines: Vec<_> = first.lines().collect();
    assert_eq!(lines[..2], ["id: 1", "event: message"], "{text}");
    assert_eq!(
        lines.len(),
        3,
        "one data line: JSON escapes newlines: {text}"
    );
    let data: serde_json::Value =
        serde_json::from_str(lines[2].strip_prefix("data: ").unwrap()).unwrap();
    assert_eq!(data["summary"], "line one\nline two");
}

#[tokio::test]
async fn a_long_history_is_replayed_across_catch_up_pages_in_order() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    // More than two catch-up pages of history, stored in one batched post.
    let batch: Vec<_> = (0..150)
        .map(|i| json!({"to": "*", "type": "impl_progress", "summary": format!("step {i}")}))
        .collect();
    c.post(&c.t("/messages/batch"), json!({ "messages": batch }))
        .await
        .expect_status(201);
    let url = format!("{}{}", d.url, c.t("/messages/stream"));
    let mut stream = SseReader::open(&url, &c.token, Some(5)).await;
    post_n(&c, 150, 160).await; // live, after the history
    let got = stream.take(155).await;
    assert_eq!(
        got.iter().map(|g| g.0).collect::<Vec<_>>(),
        (6..=160).collect::<Vec<_>>()
    );
    assert_eq!(got[154].2["summary"], "step 159");
}

/// `GET …/cursors` names the newest event and message: a client that loads its snapshot after
/// reading them and follows the streams after them gets exactly what came after, on every
/// backend the suite runs on.
#[tokio::test]
async fn cursors_name_where_a_snapshot_follows_the_streams_from() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let before = c.get(&c.t("/cursors")).await.expect_status(200).body;
    assert_eq!(before["messages"], 0, "{before}");
    c.post(&c.t("/tasks"), json!({"id": "TEST-001", "subject": "a"}))
        .await
        .expect_status(201);
    c.post(
        &c.t("/messages"),
        json!({"to": "*", "type": "note", "summary": "one"}),
    )
    .await
    .expect_status(201);
    let now = c.get(&c.t("/cursors")).await.expect_status(200).body;
    assert_eq!(now["messages"], 1, "{now}");
    let events = now["events"].as_i64().unwrap();
    assert!(
        events > before["events"].as_i64().unwrap(),
        "{before} → {now}"
    );
    // The cursor names the newest event: following after the one before it yields it first,
    // and following after the cursor yields only what comes next.
    let url = format!("{}{}", d.url, c.t("/events"));
    let newest = SseReader::open(&url, &c.token, Some(events - 1))
        .await
        .take(1)
        .await;
    assert_eq!(newest[0].0, events, "{newest:?}");
    let mut after = SseReader::open(&url, &c.token, Some(events)).await;
    c.post(
        &c.t("/messages"),
        json!({"to": "*", "type": "note", "summary": "two"}),
    )
    .await
    .expect_status(201);
    let next = after.take(1).await;
    assert_eq!(next[0].0, events + 1, "{next:?}");
    let other = d.team("other").await;
    other
        .get("/v1/teams/qa/cursors")
        .await
        .expect_error(404, "not_found");
}
