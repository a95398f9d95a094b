//! Guessing tokens: failed authentications are limited per client address (429 with
//! Retry-After; a valid token is never refused for them), the bookkeeping stays bounded, junk tokens leave nothing
//! behind, and a short configured admin token is refused at start.

use huddle_tests::{test_settings, Api, TestDaemon, ADMIN};
use reqwest::Method;
use std::net::{IpAddr, Ipv4Addr};

/// A client that connects from `127.0.0.<n>` (all of 127/8 is loopback on Linux).
fn from_address(d: &TestDaemon, n: u8, token: &str) -> (reqwest::Client, String, String) {
    let client = reqwest::Client::builder()
        .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, n)))
        .build()
        .unwrap();
    (client, format!("{}/v1/teams/qa/tasks", d.url), token.into())
}

async fn status(c: &(reqwest::Client, String, String)) -> reqwest::Response {
    c.0.get(&c.1).bearer_auth(&c.2).send().await.unwrap()
}

#[tokio::test]
async fn failed_authentications_from_one_address_are_limited_with_retry_after() {
    let d = TestDaemon::start_with(|s| {
        s.limits.failed_auth_burst = 5;
        s.limits.failed_auth_per_minute = 1;
    })
    .await;
    let t = d.team("qa").await; // a valid token, cached by its first use
    t.get(&t.t("/tasks")).await.expect_status(200);
    let fresh = d.agent("qa", "late-tester", "tester").await; // not used yet
    let guesser = from_address(&d, 1, "hud_not-a-token");
    for _ in 0..5 {
        assert_eq!(status(&guesser).await.status(), 401);
    }
    let refused = Api::new(&d.url, "hud_another-guess")
        .send(Method::GET, "/v1/teams/qa/tasks", None, &[])
        .await
        .expect_error(429, "rate_limited");
    let retry: u64 = refused.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry >= 1);
    // A missing header counts as a failure too, and is refused the same way.
    Api::new(&d.url, "")
        .send(Method::GET, "/v1/teams/qa/tasks", None, &[])
        .await
        .expect_error(429, "rate_limited");
    // Agents whose tokens are known keep working from the same address, and so does the admin.
    t.get(&t.t("/tasks")).await.expect_status(200);
    d.admin().get("/v1/teams").await.expect_status(200);
    // A valid token's first use is not refused for the address's failures either.
    Api::new(&d.url, &fresh.token)
        .send(Method::GET, "/v1/teams/qa/tasks", None, &[])
        .await
        .expect_status(200);
    // Another address has its own allowance.
    assert_eq!(
        status(&from_address(&d, 2, "hud_guess")).await.status(),
        401
    );
}

#[tokio::test]
async fn junk_tokens_leave_no_state_and_tracked_addresses_are_capped() {
    let d = TestDaemon::start_with(|s| {
        s.limits.failed_auth_burst = 1_000;
        s.limits.max_tracked_clients = 3;
    })
    .await;
    let t = d.team("qa").await;
    t.get(&t.t("/tasks")).await.expect_status(200);
    let before = d.state.rate.tracked();
    for i in 0..300 {
        let junk = format!("hud_{i:064}");
        Api::new(&d.url, &junk)
            .send(Method::GET, "/v1/teams/qa/tasks", None, &[])
            .await
            .expect_error(401, "unauthorized");
    }
    assert_eq!(
        d.state.rate.tracked(),
        before,
        "junk tokens got rate buckets"
    );
    for n in 10..30 {
        assert_eq!(status(&from_address(&d, n, "hud_x")).await.status(), 401);
        assert!(d.state.failed_auth.tracked() <= 3);
    }
}

#[tokio::test]
async fn a_short_configured_admin_token_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = test_settings(dir.path());
    settings.server.admin_token = "x".repeat(31);
    let error = TestDaemon::try_start_on(settings)
        .await
        .err()
        .expect("a 31-character admin token is refused")
        .to_string();
    assert!(error.contains("at least 32"), "{error}");
    assert!(
        !error.contains(&"x".repeat(31)),
        "the error echoes the token: {error}"
    );
    let mut settings = test_settings(dir.path());
    settings.server.admin_token = ADMIN.into();
    TestDaemon::start_on(settings).await;
}
