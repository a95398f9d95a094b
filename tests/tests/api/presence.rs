//! `lastSeenAt` is presence: any authenticated request moves it, and it keeps moving while an
//! agent waits in a long poll (a waiting worker is online, not silent).

use huddle_tests::http::Api;
use huddle_tests::TestDaemon;
use serde_json::json;

async fn last_seen(coord: &Api, name: &str) -> Option<String> {
    let agents = coord.get(&coord.t("/agents")).await.expect_status(200).body;
    agents["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == name)
        .and_then(|a| a["lastSeenAt"].as_str().map(str::to_string))
}

fn millis(at: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(at)
        .unwrap()
        .timestamp_millis()
}

#[tokio::test]
async fn a_read_is_a_sign_of_life_and_a_long_poll_keeps_its_agent_seen() {
    let d = TestDaemon::start().await;
    let coord = d.team("qa").await;

    // An observer that only reads.
    let watcher = d.agent("qa", "watcher", "observer").await;
    assert_eq!(last_seen(&coord, "watcher").await, None);
    watcher.get(&watcher.t("/tasks")).await.expect_status(200);
    huddle_tests::eventually(20, "a read marks the observer seen", || {
        let coord = coord.clone();
        async move { last_seen(&coord, "watcher").await.is_some() }
    })
    .await;

    // A tester that waits for work and does nothing else.
    let tester = d.agent("qa", "idle", "tester").await;
    let waiting = tokio::spawn(async move { tester.claim(json!({"waitMs": 30000})).await });
    huddle_tests::eventually(20, "the waiting tester is seen", || {
        let coord = coord.clone();
        async move { last_seen(&coord, "idle").await.is_some() }
    })
    .await;
    let first = millis(&last_seen(&coord, "idle").await.unwrap());
    huddle_tests::eventually(20, "the waiting tester is seen again, later", || {
        let coord = coord.clone();
        async move {
            let now = last_seen(&coord, "idle").await.map(|at| millis(&at));
            now.is_some_and(|now| now >= first + 1500)
        }
    })
    .await;
    assert!(
        !waiting.is_finished(),
        "seen while still waiting, not at the end"
    );
    waiting.abort();
}
