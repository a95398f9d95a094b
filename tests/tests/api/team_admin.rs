//! A whole team over HTTP, admin token only: deleting it refuses its tokens at once and ends
//! its streams and long polls; an export moves it to another daemon with its tokens working
//! and exports there the same bytes; a bad import is a 400 naming the line, with nothing kept.

use huddle_tests::sse::SseReader;
use huddle_tests::{Api, TestDaemon};
use reqwest::Method;
use serde_json::{json, Value};
use std::time::Duration;

/// A team `qa` with work in it: tasks (one claimed), messages, memory, a test run.
async fn busy_team(d: &TestDaemon) -> (Api, Api) {
    let c = d.team("qa").await;
    let t = d.agent("qa", "tester", "tester").await;
    c.post(
        &c.t("/tasks"),
        json!([
            {"id": "TEST-001", "subject": "first"},
            {"id": "TEST-002", "subject": "second", "blockedBy": ["TEST-001"]},
        ]),
    )
    .await
    .expect_status(201);
    // One failed attempt, then held again: it moves released, with its attempt.
    t.post(&t.t("/tasks/claim"), json!({"prefixes": ["TEST"]}))
        .await
        .expect_status(200);
    t.post(&t.t("/tasks/TEST-001/fail"), json!({"reason": "flaky"}))
        .await
        .expect_status(200);
    t.post(&t.t("/tasks/claim"), json!({"prefixes": ["TEST"]}))
        .await
        .expect_status(200);
    t.post(
        &t.t("/messages"),
        json!({"to": "*", "type": "impl_progress", "summary": "on it", "data": {"taskId": "TEST-001"}}),
    )
    .await
    .expect_status(201);
    c.patch(&c.t("/memory"), json!({"plan": "ship"}))
        .await
        .expect_status(200);
    t.post(
        &t.t("/history/runs"),
        json!({"project": "calc", "tree": "abc", "outcomes": [{"nodeid": "a", "outcome": "passed"}]}),
    )
    .await
    .expect_status(201);
    (c, t)
}

async fn export(d: &TestDaemon, team: &str) -> String {
    let reply = d
        .admin()
        .send(Method::GET, &format!("/v1/teams/{team}/export"), None, &[])
        .await
        .expect_status(200);
    assert_eq!(reply.headers["content-type"], "application/x-ndjson");
    match reply.body {
        Value::String(text) => text,
        other => panic!("an export is lines of JSON, not one value: {other}"),
    }
}

async fn import(d: &TestDaemon, team: &str, text: &str) -> huddle_tests::http::Reply {
    d.admin()
        .send(
            Method::POST,
            &format!("/v1/teams/{team}/import"),
            Some(text.as_bytes().to_vec()),
            &[],
        )
        .await
}

async fn team_names(d: &TestDaemon) -> Vec<String> {
    let teams = d.admin().get("/v1/teams").await.expect_status(200).body;
    teams["teams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_deleted_teams_tokens_are_refused_and_its_streams_and_long_polls_end() {
    let d = TestDaemon::start_with(|s| s.tasks.max_wait_ms = 600_000).await;
    let (c, t) = busy_team(&d).await;
    let dev = d.team("dev").await;
    c.send(Method::DELETE, "/v1/teams/qa", None, &[])
        .await
        .expect_error(403, "forbidden");
    let mut stream = SseReader::open(&format!("{}{}", d.url, t.t("/events")), &t.token, None).await;
    let claim = {
        let t = t.clone();
        tokio::spawn(async move {
            t.post(
                &t.t("/tasks/claim"),
                json!({"prefixes": ["QARUN"], "waitMs": 600_000}),
            )
            .await
        })
    };
    d.admin()
        .send(Method::DELETE, "/v1/teams/qa", None, &[])
        .await
        .expect_status(204);
    t.get(&t.t("/tasks"))
        .await
        .expect_error(401, "unauthorized");
    c.get(&c.t("/tasks"))
        .await
        .expect_error(401, "unauthorized");
    // Without the deletion the claim would wait ten minutes; the deadline only bounds the test.
    tokio::time::timeout(Duration::from_secs(60), claim)
        .await
        .expect("the long poll ended")
        .unwrap()
        .expect_error(401, "unauthorized");
    tokio::time::timeout(Duration::from_secs(60), async {
        while stream.next().await.is_some() {}
    })
    .await
    .expect("the stream ended");
    assert_eq!(team_names(&d).await, vec!["dev".to_string()]);
    dev.get(&dev.t("/tasks")).await.expect_status(200);
    d.admin()
        .send(Method::DELETE, "/v1/teams/qa", None, &[])
        .await
        .expect_error(404, "not_found");
    // The name is free again; the new team starts empty.
    let c2 = d.team("qa").await;
    let tasks = c2.get(&c2.t("/tasks")).await.expect_status(200).body;
    assert_eq!(tasks["tasks"], json!([]));
}

#[tokio::test]
async fn an_export_moves_a_team_to_another_daemon_with_its_tokens() {
    let a = TestDaemon::start().await;
    let b = TestDaemon::start().await;
    let (_, t) = busy_team(&a).await;
    let text = export(&a, "qa").await;
    let created = import(&b, "qa", &text).await.expect_status(201);
    assert_eq!(created.body["name"], "qa");
    // The tester's token from A works on B; the task it held is claimable again.
    let t_b = Api::new(&b.url, &t.token).in_team("qa");
    let tasks = t_b.get(&t_b.t("/tasks")).await.expect_status(200).body;
    assert_eq!(tasks["tasks"].as_array().unwrap().len(), 2);
    let claimed = t_b
        .post(&t_b.t("/tasks/claim"), json!({"prefixes": ["TEST"]}))
        .await
        .expect_status(200)
        .body;
    assert_eq!(claimed["id"], "TEST-001");
    assert_eq!(claimed["attempts"], 1);
    let memory = t_b.get(&t_b.t("/memory")).await.expect_status(200).body;
    assert_eq!(memory["doc"], json!({"plan": "ship"}));
    // The same name again: 409; another name with the same tokens: 409, nothing kept.
    import(&b, "qa", &text)
        .await
        .expect_error(409, "duplicate_team");
    import(&b, "qa-copy", &text)
        .await
        .expect_error(409, "duplicate_agent");
    assert_eq!(team_names(&b).await, vec!["qa".to_string()]);
    // Archive and restore on A: export, delete, import; the tokens work again.
    a.admin()
        .send(Method::DELETE, "/v1/teams/qa", None, &[])
        .await
        .expect_status(204);
    t.get(&t.t("/tasks"))
        .await
        .expect_error(401, "unauthorized");
    import(&a, "qa", &text).await.expect_status(201);
    assert_eq!(export(&a, "qa").await, text);
    t.get(&t.t("/tasks")).await.expect_status(200);
}

#[tokio::test]
async fn an_import_is_byte_for_byte_what_was_exported() {
    let a = TestDaemon::start().await;
    let b = TestDaemon::start().await;
    busy_team(&a).await;
    let text = export(&a, "qa").await;
    import(&b, "qa", &text).await.expect_status(201);
    assert_eq!(export(&b, "qa").await, text);
}

#[tokio::test]
async fn a_bad_import_is_a_400_naming_the_line_and_writes_nothing() {
    let d = TestDaemon::start().await;
    busy_team(&d).await;
    let text = export(&d, "qa").await;
    d.admin()
        .send(Method::DELETE, "/v1/teams/qa", None, &[])
        .await
        .expect_status(204);
    let lines: Vec<&str> = text.lines().collect();
    let n = lines.len();
    // Cut in the middle of line 3.
    let cut = lines[..2].join("\n").len() + 1 + lines[2].len() / 2;
    let unknown = text.replacen(r#""kind":"message""#, r#""kind":"mesage""#, 1);
    let version = text.replacen(r#""version":1"#, r#""version":2"#, 1);
    let no_end = format!("{}\n", lines[..n - 1].join("\n"));
    let cases: Vec<(&str, String, String)> = vec![
        ("a line cut short", text[..cut].to_string(), "line 3".into()),
        ("an unknown kind", unknown, "unknown kind \"mesage\"".into()),
        (
            "another format version",
            version,
            "line 1: format version 2".into(),
        ),
        ("no end record", no_end, "cut short".into()),
        ("an empty body", String::new(), "empty".into()),
        (
            "not JSON at all",
            "hello\n".into(),
            "line 1: not JSON".into(),
        ),
    ];
    for (what, body, says) in cases {
        let reply = import(&d, "qa", &body)
            .await
            .expect_error(400, "invalid_body");
        let message = reply.body["error"]["message"].as_str().unwrap();
        assert!(message.contains(&says), "{what}: {message}");
        assert!(team_names(&d).await.is_empty(), "{what}: nothing is kept");
    }
    let bad_name = import(&d, "Bad Name", &text).await;
    assert_eq!(bad_name.status, 400, "{}", bad_name.body);
    let other = d.team("dev").await;
    other
        .send(
            Method::POST,
            "/v1/teams/qa/import",
            Some(text.clone().into_bytes()),
            &[],
        )
        .await
        .expect_error(403, "forbidden");
    other
        .send(Method::GET, "/v1/teams/dev/export", None, &[])
        .await
        .expect_error(403, "forbidden");
    import(&d, "qa", &text).await.expect_status(201);
}

/// An export read slowly holds no snapshot (issue: a slow export slowed every team): the file
/// is spooled before the answer starts, so once the headers are in — the client reading
/// nothing more — the export's read transaction has ended. SQLite: a truncating checkpoint
/// after another team's write finds no reader in its way. PostgreSQL: no connection of the
/// database holds a snapshot (`backend_xmin`).
#[tokio::test]
async fn a_slow_export_reader_holds_no_snapshot() {
    let d = TestDaemon::start().await;
    let c = d.team("big").await;
    let other = d.team("other").await;
    let text = "x".repeat(1_000);
    // 4,000 messages of 1 KB, in batches well under the body limit.
    for batch in 0..40 {
        let messages: Vec<Value> = (0..100)
            .map(|i| json!({"to": "*", "type": "note", "summary": format!("m{batch}-{i}"), "data": {"text": text}}))
            .collect();
        c.post(&c.t("/messages/batch"), json!({"messages": messages}))
            .await
            .expect_status(201);
    }
    let response = reqwest::Client::new()
        .get(format!("{}/v1/teams/big/export", d.url))
        .bearer_auth(huddle_tests::ADMIN)
        .send()
        .await
        .expect("the export answers");
    assert_eq!(response.status().as_u16(), 200);
    let length: u64 = response.headers()["content-length"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        length > 4_000_000,
        "the whole export is spooled: {length} bytes"
    );
    // The client reads nothing more; another team writes meanwhile.
    other
        .post(
            &other.t("/messages"),
            json!({"to": "*", "type": "note", "summary": "later"}),
        )
        .await
        .expect_status(201);
    if d.settings.storage.database_url.is_empty() {
        // The daemon's own writer may be busy for a moment (it answers `busy` too): a held
        // snapshot never lets the checkpoint through, a writer's job soon does.
        let path = d.data_dir.join("huddle.db");
        huddle_tests::eventually(30, "a truncating checkpoint no reader holds up", || {
            let path = path.clone();
            async move {
                let db = rusqlite::Connection::open(path).unwrap();
                let busy: i64 = db
                    .query_row("pragma wal_checkpoint(truncate)", [], |r| r.get(0))
                    .unwrap();
                busy == 0
            }
        })
        .await;
    } else {
        let url = &d.settings.storage.database_url;
        let pool = sqlx::PgPool::connect(url).await.unwrap();
        let holding: i64 = sqlx::query_scalar(
            "select count(*) from pg_stat_activity
             where datname = current_database() and pid <> pg_backend_pid()
               and backend_xmin is not null",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        assert_eq!(holding, 0, "a connection still holds a snapshot");
    }
    // And the export, read at last, is whole.
    let body = response.text().await.unwrap();
    assert_eq!(body.len() as u64, length);
    let last = body.lines().last().unwrap();
    assert!(last.contains(r#""kind":"end""#), "{last}");
}
