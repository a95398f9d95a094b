//! `/metrics`' per-team series come from the store's maintained counters: after creates,
//! claims, completions, posts and background retention they equal what the API lists, and a
//! restarted daemon reports the same without recounting (SQLite, and PostgreSQL with
//! HUDDLE_TEST_BACKEND=postgres).

use super::metrics::{scrape, value};
use huddle_tests::{eventually, python, Api, TestDaemon};
use serde_json::{json, Value};

/// The team's series: (pending, in_progress, completed, messages, edges).
fn series(families: &[Value], team: &str) -> (f64, f64, f64, f64, f64) {
    let tasks = |status| {
        value(
            families,
            "huddle_tasks",
            &[("team", team), ("status", status)],
        )
    };
    let of = |metric| value(families, metric, &[("team", team)]);
    (
        tasks("pending"),
        tasks("in_progress"),
        tasks("completed"),
        of("huddle_team_messages"),
        of("huddle_team_edges"),
    )
}

/// The same, counted from the API's lists.
async fn listed(c: &Api) -> (f64, f64, f64, f64, f64) {
    let tasks = c
        .get(&c.t("/tasks?limit=1000"))
        .await
        .expect_status(200)
        .body;
    let tasks = tasks["tasks"].as_array().unwrap().clone();
    let with = |s: &str| tasks.iter().filter(|t| t["status"] == s).count() as f64;
    let edges: usize = tasks
        .iter()
        .map(|t| t["blockedBy"].as_array().map_or(0, Vec::len))
        .sum();
    let messages = c
        .get(&c.t("/messages?limit=1000"))
        .await
        .expect_status(200)
        .body;
    let messages = messages["messages"].as_array().unwrap().len() as f64;
    (
        with("pending"),
        with("in_progress"),
        with("completed"),
        messages,
        edges as f64,
    )
}

#[tokio::test]
async fn team_series_equal_the_lists_after_retention_and_after_a_restart() {
    python::require_modules(&["prometheus_client"]);
    let d = TestDaemon::start_with(|s| {
        s.retention.finished_tasks_per_team = 2;
        s.retention.messages_per_team = 3;
        s.retention.every_ms = 50;
    })
    .await;
    let c = d.team("ops").await;
    let worker = d.agent("ops", "ex1", "executor").await;
    let tasks: Vec<Value> = (1..=6)
        .map(|n| json!({"id": format!("A-{n:03}"), "subject": format!("t{n}")}))
        .collect();
    c.post(&c.t("/tasks"), Value::Array(tasks))
        .await
        .expect_status(201);
    c.post(
        &c.t("/tasks"),
        json!({"id": "B-001", "subject": "after", "blockedBy": ["A-006"]}),
    )
    .await
    .expect_status(201);
    for _ in 0..4 {
        let task = worker
            .claim(json!({"prefixes": ["A"]}))
            .await
            .expect("a task");
        let id = task["id"].as_str().unwrap();
        worker
            .post(&worker.t(&format!("/tasks/{id}/complete")), json!({}))
            .await
            .expect_status(200);
    }
    worker
        .claim(json!({"prefixes": ["A"]}))
        .await
        .expect("a fifth task");
    for n in 0..5 {
        worker
            .post(
                &worker.t("/messages"),
                json!({"to": "*", "type": "note", "summary": format!("m{n}")}),
            )
            .await
            .expect_status(201);
    }
    // Retention keeps the newest 2 finished tasks and 3 messages.
    eventually(60, "retention to catch up", || async {
        listed(&c).await == (2.0, 1.0, 2.0, 3.0, 1.0)
    })
    .await;
    let families = scrape(&d).await;
    assert_eq!(series(&families, "ops"), listed(&c).await);
    assert!(value(&families, "huddle_team_storage_bytes", &[("team", "ops")]) > 0.0);

    let d = d.restart().await;
    let families = scrape(&d).await;
    assert_eq!(
        series(&families, "ops"),
        (2.0, 1.0, 2.0, 3.0, 1.0),
        "the counters are the database's, not counted again at start"
    );
}
