//! A team deleted through one replica is gone on the others too: the database announces the
//! deletion, so a token another replica had cached is refused and its stream there ends.

use super::{on, replicas, team, ADMIN};
use huddle_tests::sse::SseReader;
use huddle_tests::Api;
use reqwest::Method;
use std::time::Duration;

#[tokio::test]
async fn a_team_deleted_on_one_replica_is_refused_on_the_others() {
    let r = replicas(2).await;
    let (a, b) = (&r.nodes[0].url, &r.nodes[1].url);
    let apis = team(a, &[("coordinator", "coordinator"), ("tester", "tester")]).await;
    let tester_b = on(&apis[1], b);
    // B has resolved (and cached) the tester's token and follows the team's messages.
    tester_b.get(&tester_b.t("/tasks")).await.expect_status(200);
    let stream_url = format!("{b}{}", tester_b.t("/messages/stream"));
    let mut stream = SseReader::open(&stream_url, &tester_b.token, None).await;
    Api::new(a, ADMIN)
        .send(Method::DELETE, "/v1/teams/qa", None, &[])
        .await
        .expect_status(204);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let status = tester_b.get(&tester_b.t("/tasks")).await.status;
        if status == 401 {
            break;
        }
        assert_eq!(status, 200);
        assert!(
            tokio::time::Instant::now() < deadline,
            "B still accepts a token of the deleted team"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(stream.next().await.is_none(), "the stream on B ended");
    Api::new(b, ADMIN)
        .send(Method::DELETE, "/v1/teams/qa", None, &[])
        .await
        .expect_error(404, "not_found");
}
