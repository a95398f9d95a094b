//! One team cannot take what every team shares: streams are capped per team and per client
//! address besides per agent (429 `too_many_streams`), and agents per team (409 `team_limit`).

use huddle_tests::sse::SseReader;
use huddle_tests::{Api, TestDaemon};
use serde_json::json;

/// Whether a new stream from `api` opens (200) once the others have let go.
async fn stream_opens(d: &TestDaemon, api: &Api) -> bool {
    reqwest::Client::new()
        .get(format!("{}{}", d.url, api.t("/events")))
        .bearer_auth(&api.token)
        .send()
        .await
        .unwrap()
        .status()
        == 200
}

#[tokio::test]
async fn streams_are_capped_per_team_whatever_agent_opens_them() {
    let d = TestDaemon::start_with(|s| s.limits.max_streams_per_team = 2).await;
    let noisy = d.team("noisy").await;
    let observers = [
        d.agent("noisy", "watcher-1", "observer").await,
        d.agent("noisy", "watcher-2", "observer").await,
    ];
    let quiet = d.team("quiet").await;
    let first = SseReader::open(
        &format!("{}{}", d.url, noisy.t("/events")),
        &noisy.token,
        None,
    )
    .await;
    let _second = SseReader::open(
        &format!("{}{}", d.url, observers[0].t("/events")),
        &observers[0].token,
        None,
    )
    .await;
    // A third agent of the same team is refused, naming the team's limit.
    let refused = observers[1]
        .get(&observers[1].t("/messages/stream"))
        .await
        .expect_error(429, "too_many_streams");
    let message = refused.body["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(message.contains("max_streams_per_team"), "{message}");
    assert!(refused.headers.contains_key("retry-after"));
    // Another team is not affected.
    let _quiet = SseReader::open(
        &format!("{}{}", d.url, quiet.t("/events")),
        &quiet.token,
        None,
    )
    .await;
    drop(first);
    huddle_tests::eventually(10, "the team's slot frees when a stream closes", || {
        stream_opens(&d, &observers[1])
    })
    .await;
}

#[tokio::test]
async fn streams_are_capped_per_client_address_across_teams() {
    let d = TestDaemon::start_with(|s| s.limits.max_streams_per_address = 3).await;
    let a = d.team("alpha").await;
    let b = d.team("beta").await;
    let url = format!("{}{}", d.url, a.t("/events"));
    let first = SseReader::open(&url, &a.token, None).await;
    let _second = SseReader::open(&url, &a.token, None).await;
    let _third = SseReader::open(&url, &a.token, None).await;
    // Every test client is 127.0.0.1: a fourth stream from any team is refused.
    let refused = b
        .get(&b.t("/events"))
        .await
        .expect_error(429, "too_many_streams");
    let message = refused.body["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(message.contains("max_streams_per_address"), "{message}");
    drop(first);
    huddle_tests::eventually(10, "the address's slot frees when a stream closes", || {
        stream_opens(&d, &b)
    })
    .await;
}

#[tokio::test]
async fn agents_per_team_are_capped_and_a_revoked_agent_frees_its_place() {
    let d = TestDaemon::start_with(|s| s.limits.max_agents_per_team = 3).await;
    let c = d.team("qa").await; // the coordinator is the first agent
    d.agent("qa", "tester-1", "tester").await;
    d.agent("qa", "tester-2", "tester").await;
    let admin = d.admin();
    let refused = admin
        .post(
            "/v1/teams/qa/agents",
            json!({"name": "tester-3", "role": "tester"}),
        )
        .await
        .expect_error(409, "team_limit");
    assert_eq!(refused.body["error"]["details"]["max"], 3);
    // A coordinator is held to the same cap.
    c.post(
        &c.t("/agents"),
        json!({"name": "tester-3", "role": "tester"}),
    )
    .await
    .expect_error(409, "team_limit");
    let listed = c.get(&c.t("/agents")).await.expect_status(200);
    assert_eq!(
        listed.body["agents"].as_array().map(Vec::len),
        Some(3),
        "{}",
        listed.body
    );
    // Another team is not affected.
    d.team("other").await;
    d.agent("other", "tester-1", "tester").await;
    // Revoking one frees a place.
    c.post(&c.t("/agents/tester-2/revoke"), json!({}))
        .await
        .expect_status(200);
    d.agent("qa", "tester-3", "tester").await;
}

/// A new token brings a revoked agent back, so it takes a place like a new agent: otherwise
/// add, revoke and rotate would grow a team past its cap without end.
#[tokio::test]
async fn a_rotation_that_brings_a_revoked_agent_back_counts_against_the_cap() {
    let d = TestDaemon::start_with(|s| s.limits.max_agents_per_team = 2).await;
    let c = d.team("qa").await;
    d.agent("qa", "tester-1", "tester").await;
    c.post(&c.t("/agents/tester-1/revoke"), json!({}))
        .await
        .expect_status(200);
    d.agent("qa", "tester-2", "tester").await;
    let refused = c
        .post(&c.t("/agents/tester-1/rotate"), json!({}))
        .await
        .expect_error(409, "team_limit");
    assert_eq!(refused.body["error"]["details"]["max"], 2);
    // Refused whole: the revoked agent stays revoked and the live one keeps its place.
    d.admin()
        .post(
            "/v1/teams/qa/agents",
            json!({"name": "tester-3", "role": "tester"}),
        )
        .await
        .expect_error(409, "team_limit");
    // A live agent's rotation takes no new place; with a place free, the revoked one returns.
    c.post(&c.t("/agents/tester-2/rotate"), json!({}))
        .await
        .expect_status(200);
    c.post(&c.t("/agents/tester-2/revoke"), json!({}))
        .await
        .expect_status(200);
    let back = c
        .post(&c.t("/agents/tester-1/rotate"), json!({}))
        .await
        .expect_status(200);
    let tester = Api::new(&d.url, back.body["token"].as_str().unwrap()).in_team("qa");
    let me = tester.get(&tester.t("/me")).await.expect_status(200);
    assert_eq!(me.body["name"], "tester-1");
}
