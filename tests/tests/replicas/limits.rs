//! Limits that hold for the deployment, not per replica: two `huddled` processes on one
//! PostgreSQL database share a token's request rate and the per-token and per-team stream caps
//! (each enforces 1/N of them, SECURITY.md "Limits across replicas"), and a replica killed
//! with SIGKILL stops counting once its heartbeat is older than the expiry.

use super::ADMIN;
use huddle_tests::process::HuddledProcess;
use huddle_tests::Api;
use serde_json::json;

const BURST: usize = 40;
const PER_TOKEN: usize = 4;
const PER_TEAM: usize = 6;

struct Node {
    process: HuddledProcess,
    /// `/metrics` on its own address (no token, so polling it costs no rate).
    metrics: String,
    _dir: tempfile::TempDir,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Two replicas on one fresh database: one request a minute after a burst of 40, streams
/// capped at 4 per token and 6 per team, a heartbeat every 100 ms that expires after 1.5 s.
async fn two_replicas() -> Vec<Node> {
    let url = huddle_tests::pg::fresh_database().await;
    let mut nodes = Vec::new();
    for _ in 0..2 {
        let dir = tempfile::tempdir().unwrap();
        let metrics = format!("127.0.0.1:{}", free_port());
        let (burst, per_token, per_team) = (
            BURST.to_string(),
            PER_TOKEN.to_string(),
            PER_TEAM.to_string(),
        );
        let process = HuddledProcess::start(
            dir.path(),
            &[
                ("HUDDLE_DATABASE_URL", url.as_str()),
                ("HUDDLE_ADMIN_TOKEN", ADMIN),
                ("HUDDLE_METRICS_LISTEN", metrics.as_str()),
                ("HUDDLE_LIMITS_REQUESTS_PER_MINUTE", "1"),
                ("HUDDLE_LIMITS_BURST", burst.as_str()),
                ("HUDDLE_LIMITS_MAX_STREAMS_PER_TOKEN", per_token.as_str()),
                ("HUDDLE_LIMITS_MAX_STREAMS_PER_TEAM", per_team.as_str()),
                ("HUDDLE_LIMITS_REPLICA_HEARTBEAT_MS", "100"),
                ("HUDDLE_LIMITS_REPLICA_EXPIRY_MS", "1500"),
            ],
        )
        .unwrap_or_else(|e| panic!("replica did not start: {e}"));
        nodes.push(Node {
            process,
            metrics: format!("http://{metrics}/metrics"),
            _dir: dir,
        });
    }
    nodes
}

/// The replicas `node` counts, from its `huddle_replicas_live` gauge.
async fn live_replicas(node: &Node) -> Option<u64> {
    let text = reqwest::get(&node.metrics).await.ok()?.text().await.ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("huddle_replicas_live "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|v| v as u64)
}

async fn until_counting(node: &Node, n: u64) {
    huddle_tests::eventually(30, &format!("a replica counting {n} live"), || async move {
        live_replicas(node).await == Some(n)
    })
    .await;
}

/// The team `qa` and a token per agent name (all testers).
async fn team(url: &str, names: &[&str]) -> Vec<String> {
    let admin = Api::new(url, ADMIN);
    admin
        .post("/v1/teams", json!({"name": "qa"}))
        .await
        .expect_status(201);
    let mut tokens = Vec::new();
    for name in names {
        let r = admin
            .post(
                "/v1/teams/qa/agents",
                json!({"name": name, "role": "tester"}),
            )
            .await
            .expect_status(201);
        tokens.push(r.body["token"].as_str().unwrap().to_string());
    }
    tokens
}

#[tokio::test]
async fn a_tokens_request_rate_holds_across_two_replicas() {
    let nodes = two_replicas().await;
    until_counting(&nodes[0], 2).await;
    until_counting(&nodes[1], 2).await;
    let tokens = team(&nodes[0].process.url, &["busy"]).await;
    let apis: Vec<Api> = nodes
        .iter()
        .map(|n| Api::new(&n.process.url, &tokens[0]).in_team("qa"))
        .collect();
    let started = std::time::Instant::now();
    let mut accepted = [0usize; 2];
    for _ in 0..BURST {
        for (i, api) in apis.iter().enumerate() {
            let r = api.get(&api.t("/tasks")).await;
            match r.status.as_u16() {
                200 => accepted[i] += 1,
                429 => assert_eq!(r.body["error"]["code"], "rate_limited"),
                s => panic!("unexpected {s}: {}", r.body),
            }
        }
    }
    // One request a minute refills the deployment's bucket: allow for the minutes begun.
    let refilled = started.elapsed().as_secs() as usize / 60 + 1;
    let total = accepted[0] + accepted[1];
    assert!(
        total <= BURST + refilled,
        "{total} requests accepted across both replicas ({accepted:?}); the burst is {BURST}"
    );
    assert!(
        accepted.iter().all(|&n| n > 0),
        "both replicas serve: {accepted:?}"
    );
}

/// Opens a message stream of `token` on `url`: the response (held open) or the refusal's code.
async fn open_stream(url: &str, token: &str) -> Result<reqwest::Response, String> {
    let res = reqwest::Client::new()
        .get(format!("{url}/v1/teams/qa/messages/stream"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    match res.status().as_u16() {
        200 => Ok(res),
        429 => {
            let body: serde_json::Value = res.json().await.unwrap();
            Err(body["error"]["code"]
                .as_str()
                .unwrap_or_default()
                .to_string())
        }
        s => panic!("stream answered {s}"),
    }
}

#[tokio::test]
async fn stream_caps_hold_across_two_replicas_until_one_stops_counting() {
    let mut nodes = two_replicas().await;
    until_counting(&nodes[0], 2).await;
    until_counting(&nodes[1], 2).await;
    let tokens = team(&nodes[0].process.url, &["s1", "s2", "s3"]).await;
    let urls: Vec<String> = nodes.iter().map(|n| n.process.url.clone()).collect();
    // Each agent tries three streams on each replica: 18 tries against a team cap of 6.
    let mut open = Vec::new();
    let mut per_agent = [0usize; 3];
    for url in &urls {
        for (i, token) in tokens.iter().enumerate() {
            for _ in 0..3 {
                match open_stream(url, token).await {
                    Ok(stream) => {
                        per_agent[i] += 1;
                        open.push(stream);
                    }
                    Err(code) => assert_eq!(code, "too_many_streams"),
                }
            }
        }
    }
    // With the caps divisible by the two replicas, N × ceil(cap / N) is the cap itself.
    assert_eq!(open.len(), PER_TEAM, "streams of the team: {per_agent:?}");
    assert!(
        per_agent.iter().all(|&n| n <= PER_TOKEN),
        "streams per token: {per_agent:?}"
    );
    // On A the team holds its share (3): s3 is refused there.
    assert_eq!(
        open_stream(&urls[0], &tokens[2]).await.err().as_deref(),
        Some("too_many_streams")
    );

    // B dies without a word; once its heartbeat is older than the expiry, A alone holds the
    // whole team cap: three more streams there, then the cap.
    nodes[1].process.kill9();
    until_counting(&nodes[0], 1).await;
    let mut more = 0;
    loop {
        match open_stream(&urls[0], &tokens[2]).await {
            Ok(stream) => {
                more += 1;
                open.push(stream);
                assert!(more <= PER_TEAM, "past the team cap");
            }
            Err(code) => {
                assert_eq!(code, "too_many_streams");
                break;
            }
        }
    }
    assert_eq!(
        more,
        PER_TEAM - PER_TEAM / 2,
        "A's streams fill the team cap"
    );
    nodes[0].process.kill9();
}
