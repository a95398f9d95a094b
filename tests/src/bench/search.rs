//! `search`: `--messages` stored messages (100,000 by default, posted in batches of 100), then
//! `GET …/messages/search` in shapes a dashboard or an agent sends — words everywhere, a word
//! in one message, a task, a type page deep in the history — each timed alone; total queries per
//! second and each shape's p50/p99 and answer size.

use super::client::{add_agent, setup_team, BenchClient};
use super::stats::{Figures, Latencies};
use super::Sizes;
use serde_json::{json, Value};
use std::time::Instant;

/// Queries per shape.
const ROUNDS: usize = 50;

pub async fn run(admin: &BenchClient, sizes: &Sizes) -> Figures {
    let coord = setup_team(admin, "search").await;
    let stored = sizes.messages.max(100);
    let posters = 8;
    let mut handles = Vec::new();
    for p in 0..posters {
        let api = add_agent(admin, "search", &format!("tester-{p}"), "tester").await;
        handles.push(tokio::spawn(async move {
            for batch in (p * 100..stored).step_by(posters * 100) {
                let messages: Vec<Value> = (batch..(batch + 100).min(stored))
                    .map(|n| {
                        let kind = if n % 10 == 0 { "fix_required" } else { "test_result" };
                        json!({"to": "coordinator", "type": kind,
                               "summary": format!("run {n}: average failed on TEST-{:04}", n % 2000),
                               "data": {"taskId": format!("TEST-{:04}", n % 2000), "n": n}})
                    })
                    .collect();
                api.post_ok(
                    "/v1/teams/search/messages/batch",
                    &json!({ "messages": messages }),
                    201,
                )
                .await;
            }
        }));
    }
    for h in handles {
        h.await.expect("poster");
    }
    let middle = stored / 2;
    let shapes: [(&str, String); 5] = [
        ("a word in every message", "q=average&limit=50".into()),
        (
            "a word in one message",
            format!("q=run%20{}%3A&limit=50", stored - 7),
        ),
        ("a task", "task=TEST-0042&limit=50".into()),
        (
            "a type, page deep in the history",
            format!("type=fix_required&before={middle}&limit=50"),
        ),
        (
            "words and a type",
            "q=TEST-004%20average&type=fix_required&limit=50".into(),
        ),
    ];
    let (http, auth) = coord.raw();
    let started = Instant::now();
    let mut all = Latencies::default();
    let mut notes = Vec::new();
    for (name, query) in &shapes {
        let url = format!("{}/v1/teams/search/messages/search?{query}", coord.base());
        let mut lat = Latencies::default();
        let mut total = 0;
        for _ in 0..ROUNDS {
            let t0 = Instant::now();
            let res = http
                .get(&url)
                .header("authorization", auth)
                .send()
                .await
                .expect("search");
            assert_eq!(res.status(), 200, "{url}");
            let page: Value = res.json().await.expect("json");
            lat.push(t0.elapsed());
            total = page["total"].as_i64().unwrap_or(-1);
        }
        all.extend(Latencies(lat.0.clone()));
        let (p50, p99, _) = lat.summary();
        notes.push((
            format!("{name} ({total} matches)"),
            format!("p50 {p50:.1} ms, p99 {p99:.1} ms"),
        ));
    }
    let elapsed = started.elapsed();
    let mut figures = Figures::new(
        "search",
        "requests",
        shapes.len() * ROUNDS,
        elapsed,
        &mut all,
    )
    .note("stored messages", stored);
    for (k, v) in notes {
        figures = figures.note(&k, v);
    }
    figures
}
