//! Replicas through pgbouncer with its default settings (no `ignore_startup_parameters`) in
//! session mode: they start (no `extra_float_digits` startup parameter), migrate, LISTEN, and
//! a stream on one sees the other's posts. Transaction mode is not supported (README).

use huddle_tests::pgbouncer::PgBouncer;
use huddle_tests::process::HuddledProcess;
use huddle_tests::sse::SseReader;
use huddle_tests::Api;
use serde_json::json;

const ADMIN: &str = "pgbouncer-admin-token-0123456789abcdef";

#[tokio::test]
async fn replicas_work_through_pgbouncer_in_session_mode_with_its_default_settings() {
    let direct = huddle_tests::pg::fresh_database().await;
    let parsed = reqwest::Url::parse(&direct).unwrap();
    let database = parsed.path().trim_start_matches('/').to_string();
    let bouncer = PgBouncer::start(parsed.port().unwrap(), "session");
    let url = bouncer.url(&database);
    let mut nodes = Vec::new();
    let mut dirs = Vec::new();
    for _ in 0..2 {
        let dir = tempfile::tempdir().unwrap();
        let env = [
            ("HUDDLE_DATABASE_URL", url.as_str()),
            ("HUDDLE_ADMIN_TOKEN", ADMIN),
        ];
        let node = HuddledProcess::start(dir.path(), &env)
            .unwrap_or_else(|e| panic!("a replica did not start through pgbouncer: {e}"));
        nodes.push(node);
        dirs.push(dir);
    }
    let (a, b) = (&nodes[0].url, &nodes[1].url);
    let admin = Api::new(a, ADMIN);
    admin
        .post("/v1/teams", json!({"name": "qa"}))
        .await
        .expect_status(201);
    let mut tokens = Vec::new();
    for name in ["coordinator", "tester"] {
        let r = admin
            .post("/v1/teams/qa/agents", json!({"name": name, "role": name}))
            .await
            .expect_status(201);
        tokens.push(r.body["token"].as_str().unwrap().to_string());
    }
    let stream = format!("{b}/v1/teams/qa/messages/stream");
    let mut on_b = SseReader::open(&stream, &tokens[1], None).await;
    let coord = Api::new(a, &tokens[0]).in_team("qa");
    for n in 1..=3 {
        coord
            .post(
                &coord.t("/messages"),
                json!({"to": "*", "type": "impl_progress", "summary": format!("m{n}")}),
            )
            .await
            .expect_status(201);
    }
    let got = on_b.take(3).await;
    let summaries: Vec<_> = got.iter().map(|g| g.2["summary"].clone()).collect();
    assert_eq!(summaries, ["m1", "m2", "m3"]);
    coord
        .post(
            &coord.t("/tasks"),
            json!({"id": "TEST-001", "subject": "s"}),
        )
        .await
        .expect_status(201);
    let tester = Api::new(b, &tokens[1]).in_team("qa");
    let claimed = tester
        .claim(json!({"prefixes": ["TEST"], "leaseMs": 60000}))
        .await
        .expect("claimed through pgbouncer");
    assert_eq!(claimed["id"], "TEST-001");
}
