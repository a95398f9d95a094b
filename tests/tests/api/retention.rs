//! `[retention]` applied by the daemon in the background: with `messages_per_team = 2` the
//! oldest messages go, the newest two stay (SQLite, and PostgreSQL with
//! HUDDLE_TEST_BACKEND=postgres).

use huddle_tests::TestDaemon;
use serde_json::json;

#[tokio::test]
async fn the_daemon_keeps_the_newest_messages_per_team_in_the_background() {
    let d = TestDaemon::start_with(|s| {
        s.retention.messages_per_team = 2;
        s.retention.every_ms = 50;
        s.retention.batch = 2;
    })
    .await;
    let c = d.team("qa").await;
    for n in 1..=5 {
        c.post(
            &c.t("/messages"),
            json!({"to": "*", "type": "impl_progress", "summary": format!("m{n}")}),
        )
        .await
        .expect_status(201);
    }
    let path = c.t("/messages?limit=100");
    huddle_tests::eventually(60, "only the newest two messages are kept", || {
        let (c, path) = (c.clone(), path.clone());
        async move {
            let r = c.get(&path).await.expect_status(200);
            let summaries: Vec<_> = r.body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["summary"].as_str().unwrap().to_string())
                .collect();
            assert!(summaries.ends_with(&["m4".to_string(), "m5".to_string()]));
            summaries == ["m4", "m5"]
        }
    })
    .await;
}
