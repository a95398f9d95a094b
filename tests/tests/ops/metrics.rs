//! `/metrics` after real traffic, parsed by Prometheus's own text parser (`parse_metrics.py`,
//! the `prometheus_client` package): the families exist with their types, labels are route
//! templates, and the values moved by what the traffic did. Counters are compared before and
//! after, and this test's team and routes are its own, so what other tests sharing the process's
//! recorder record does not matter.

use huddle_tests::{eventually, python, Api, TestDaemon, ADMIN};
use serde_json::{json, Value};
use std::path::Path;

/// Scrapes with the admin token and parses: `(family name, type, samples)`.
pub(crate) async fn scrape(d: &TestDaemon) -> Vec<Value> {
    let response = reqwest::Client::new()
        .get(format!("{}/metrics", d.url))
        .bearer_auth(ADMIN)
        .send()
        .await
        .expect("scrape");
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"].to_str().unwrap_or("");
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    let text = response.text().await.expect("body");
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), &text).expect("write scrape");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ops/parse_metrics.py");
    let path = file.path().to_string_lossy().to_string();
    let output = python::run(&script, &[("METRICS_FILE", &path)]).await;
    serde_json::from_slice::<Vec<Value>>(&output.stdout).expect("parsed families")
}

fn family<'a>(families: &'a [Value], name: &str) -> &'a Value {
    families
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("no family {name}"))
}

/// The value of the sample `sample` whose labels include `labels` (0 when absent).
pub(crate) fn value(families: &[Value], sample: &str, labels: &[(&str, &str)]) -> f64 {
    families
        .iter()
        .flat_map(|f| f["samples"].as_array().into_iter().flatten())
        .filter(|s| s["name"] == sample)
        .filter(|s| labels.iter().all(|(k, v)| s["labels"][*k] == *v))
        .map(|s| s["value"].as_f64().unwrap_or(0.0))
        .sum()
}

#[tokio::test]
async fn metrics_parse_as_prometheus_text_and_move_with_traffic() {
    python::require_modules(&["prometheus_client"]);
    let d = TestDaemon::start().await;
    let coordinator = d.team("ops").await;
    let executor = d.agent("ops", "ex1", "executor").await;
    let observer = d.agent("ops", "watcher", "observer").await;
    let before = scrape(&d).await;

    let tasks = json!([{"id": "A-1", "subject": "a"}, {"id": "A-2", "subject": "b"},
                       {"id": "A-3", "subject": "c"}]);
    coordinator
        .post(&coordinator.t("/tasks"), tasks)
        .await
        .expect_status(201);
    // A lease left to expire: the sweeper returns A-1 to the queue.
    let claimed = executor
        .claim(json!({"prefixes": ["A"], "leaseMs": 50}))
        .await;
    assert_eq!(claimed.expect("a task")["id"], "A-1");
    eventually(30, "A-1's lease to expire", || async {
        executor.get(&executor.t("/tasks/A-1")).await.body["status"] == "pending"
    })
    .await;
    let claimed = executor.claim(json!({"prefixes": ["A"]})).await;
    assert_eq!(claimed.expect("a task")["id"], "A-1");
    executor
        .post(&executor.t("/tasks/A-1/complete"), json!({}))
        .await
        .expect_status(200);

    // Three messages stored; the retry with the same key stores nothing.
    let message = json!({"to": "*", "type": "note", "summary": "hi"});
    for _ in 0..2 {
        executor
            .try_post_with_key(&executor.t("/messages"), message.clone(), "k-1")
            .await
            .expect("posted");
    }
    let batch = json!({"messages": [message.clone(), message]});
    executor
        .post(&executor.t("/messages/batch"), batch)
        .await
        .expect_status(201);

    // Refusals.
    observer
        .post(
            &observer.t("/tasks"),
            json!({"prefix": "A", "subject": "x"}),
        )
        .await
        .expect_error(403, "forbidden");
    Api::new(&d.url, "hud_unknown")
        .get("/v1/teams/ops/tasks")
        .await
        .expect_error(401, "unauthorized");

    // A stream held open while scraping.
    let stream = reqwest::Client::new()
        .get(format!("{}{}", d.url, observer.t("/events")))
        .bearer_auth(&observer.token)
        .send()
        .await
        .expect("stream");
    assert_eq!(stream.status(), 200);
    let after = scrape(&d).await;
    drop(stream);

    let moved = |sample: &str, labels: &[(&str, &str)]| {
        value(&after, sample, labels) - value(&before, sample, labels)
    };
    assert_eq!(family(&after, "huddle_http_requests")["type"], "counter");
    let create = [
        ("method", "POST"),
        ("route", "/v1/teams/{team}/tasks"),
        ("status", "201"),
    ];
    assert_eq!(moved("huddle_http_requests_total", &create), 1.0);
    let forbidden = [("route", "/v1/teams/{team}/tasks"), ("status", "403")];
    assert_eq!(moved("huddle_http_requests_total", &forbidden), 1.0);
    let claims = [("route", "/v1/teams/{team}/tasks/claim"), ("status", "200")];
    assert_eq!(moved("huddle_http_requests_total", &claims), 2.0);
    // Route labels are templates: no team name or task id ever becomes a label value.
    for f in &after {
        for s in f["samples"].as_array().into_iter().flatten() {
            let route = s["labels"]["route"].as_str().unwrap_or("");
            assert!(
                !route.contains("/ops") && !route.contains("A-1"),
                "raw path as a label: {s}"
            );
        }
    }
    assert_eq!(
        family(&after, "huddle_http_request_duration_seconds")["type"],
        "histogram"
    );
    let latency = [("method", "POST"), ("route", "/v1/teams/{team}/tasks")];
    assert_eq!(
        moved("huddle_http_request_duration_seconds_count", &latency),
        2.0
    );

    // The group-commit writer is SQLite's; the PostgreSQL backend has none.
    if std::env::var("HUDDLE_TEST_BACKEND").as_deref() != Ok("postgres") {
        assert_eq!(
            family(&after, "huddle_writer_batch_size")["type"],
            "histogram"
        );
        assert!(moved("huddle_writer_batch_size_count", &[]) >= 1.0);
        assert!(moved("huddle_writer_batch_size_sum", &[]) >= 1.0);
        assert!(moved("huddle_writer_commit_seconds_count", &[]) >= 1.0);
    }

    assert_eq!(family(&after, "huddle_tasks")["type"], "gauge");
    let tasks = |status| {
        value(
            &after,
            "huddle_tasks",
            &[("team", "ops"), ("status", status)],
        )
    };
    assert_eq!(
        (tasks("pending"), tasks("in_progress"), tasks("completed")),
        (2.0, 0.0, 1.0)
    );
    assert_eq!(moved("huddle_leases_expired_total", &[]), 1.0);
    assert_eq!(moved("huddle_messages_posted_total", &[]), 3.0);
    assert!(value(&after, "huddle_open_streams", &[]) >= 1.0);
    // At least: tests sharing this process (`cargo test`) share the recorder.
    assert!(moved("huddle_http_errors_total", &[("code", "forbidden")]) >= 1.0);
    assert!(moved("huddle_http_errors_total", &[("code", "unauthorized")]) >= 1.0);
}

#[tokio::test]
async fn metrics_on_the_api_address_are_for_the_admin_token_only() {
    let d = TestDaemon::start().await;
    let coordinator = d.team("qa").await;
    Api::new(&d.url, &coordinator.token)
        .get("/metrics")
        .await
        .expect_error(403, "forbidden");
    let response = reqwest::Client::new()
        .get(format!("{}/metrics", d.url))
        .send()
        .await
        .expect("scrape");
    assert_eq!(response.status(), 401);
}

/// A claimer that has just taken the last task looks again: on SQLite that look is answered
/// from what the claim proved, without a write, and a task created after still reaches it.
#[tokio::test]
async fn an_empty_look_after_taking_the_last_task_skips_the_writer_and_misses_nothing() {
    python::require_modules(&["prometheus_client"]);
    let d = TestDaemon::start().await;
    let coordinator = d.team("memo").await;
    let tester = d.agent("memo", "t1", "tester").await;
    let tasks = coordinator.t("/tasks");
    let create = |id: &str| coordinator.post(&tasks, json!([{"id": id, "subject": "s"}]));
    let sqlite = std::env::var("HUDDLE_TEST_BACKEND").as_deref() != Ok("postgres");
    let before = scrape(&d).await;
    // The look is answered without a write only within a second of the agent's last-seen
    // write: a round slowed past that by a loaded machine goes to the writer, so try again.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    for round in 1.. {
        let id = format!("TEST-{round}");
        create(&id).await.expect_status(201);
        let claimed = tester.claim(json!({"prefixes": ["TEST"]})).await;
        assert_eq!(claimed.expect("a task")["id"], id.as_str());
        assert!(tester.claim(json!({"prefixes": ["TEST"]})).await.is_none());
        let after = scrape(&d).await;
        let moved = value(&after, "huddle_claims_known_empty_total", &[])
            - value(&before, "huddle_claims_known_empty_total", &[]);
        if !sqlite || moved >= 1.0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no empty look was answered without the writer in {round} rounds"
        );
    }

    // Waiting now: the next task still reaches this claimer.
    let waiting = tester.claim(json!({"prefixes": ["TEST"], "waitMs": 30000}));
    let (claimed, created) = tokio::join!(waiting, create("TEST-1000"));
    created.expect_status(201);
    assert_eq!(claimed.expect("a task")["id"], "TEST-1000");
}
