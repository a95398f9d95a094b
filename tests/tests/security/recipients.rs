//! Streams that follow one recipient (`?to=`) cost a channel only while someone follows it, and
//! only real recipients can be followed, so distinct `to` values cannot pile up memory.

use huddle_tests::sse::SseReader;
use huddle_tests::{eventually, TestDaemon};

#[tokio::test]
async fn a_recipient_channel_is_freed_when_its_last_follower_leaves() {
    // Keep-alives every second, so the daemon notices closed streams without any message.
    let d = TestDaemon::start_with(|s| s.streams.keepalive_secs = 1).await;
    let c = d.team("qa").await;
    let names = ["alice", "bob", "carol"];
    for name in names {
        d.agent("qa", name, "tester").await;
    }
    let team_id = d.state.store.team_id("qa").await.unwrap();
    let mut followers = Vec::new();
    for to in names.iter().chain(["tester", "*"].iter()) {
        let url = format!("{}{}?to={to}", d.url, c.t("/messages/stream"));
        followers.push(SseReader::open(&url, &c.token, None).await);
        followers.push(SseReader::open(&url, &c.token, None).await);
    }
    assert_eq!(d.state.hub.recipient_channels(team_id), 5);
    // One of two followers leaving keeps the channel.
    followers.remove(0);
    let alice_stays = followers.remove(0);
    let hub = d.state.hub.clone();
    drop(followers);
    eventually(30, "the channels of closed streams are freed", || {
        let hub = hub.clone();
        async move { hub.recipient_channels(team_id) == 1 }
    })
    .await;
    drop(alice_stays);
    eventually(30, "the last channel is freed", || {
        let hub = hub.clone();
        async move { hub.recipient_channels(team_id) == 0 }
    })
    .await;
}

#[tokio::test]
async fn following_a_recipient_that_does_not_exist_is_refused() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    for to in ["nobody", "x%20y", "TESTER"] {
        c.get(&c.t(&format!("/messages/stream?to={to}")))
            .await
            .expect_error(400, "invalid_field");
    }
    let team_id = d.state.store.team_id("qa").await.unwrap();
    assert_eq!(d.state.hub.recipient_channels(team_id), 0);
    for to in ["coordinator", "observer", "*"] {
        let url = format!("{}{}?to={to}", d.url, c.t("/messages/stream"));
        SseReader::open(&url, &c.token, None).await;
    }
}
