//! The dashboard at a large history, generated through the API (batched posts): 2,000 tasks in
//! chains of ten, 20,000 fix-cycle messages (`HUDDLE_DASHBOARD_MESSAGES` sets another count, e.g.
//! 100000), sent by three testers in turn. `tests/dashboard-e2e/large.mjs` opens every view, sees
//! a new message and a new report arrive, checks that the log's filters and counts and each
//! agent's "messages sent" equal what the API answers over the whole history, pages and sorts the
//! Pass-rate table, focuses the graph, and screenshots every view in light and dark, desktop and
//! 390 px, checking none scrolls sideways. It prints its
//! timings as `figure` lines (recorded in benchmarks/BENCHMARKS.md), never asserts on them.

use super::browser::require_browser;
use super::script::Script;
use huddle_tests::{Api, TestDaemon};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const TEAM: &str = "big";
const TASKS: usize = 2_000;
const BATCH: usize = 1_000;

fn task_id(n: usize) -> String {
    format!("TEST-{n:04}")
}

/// Message `n`: a fix-cycle step about task `n % TASKS`; every fifth a test_result, every 50th a
/// fix_required. Pass rates spread from 40 to 100 %, some below the gate.
fn message(n: usize) -> Value {
    let task = task_id(n % TASKS);
    let rate = 40.0 + ((n * 37) % 61) as f64;
    let iteration = n / TASKS % 5 + 1;
    match n % 50 {
        0 => json!({"to": "coordinator", "type": "fix_required",
            "summary": format!("{task}: test_total fails after iteration {iteration}"),
            "data": {"taskId": task, "reason": "assertion failed", "tests": ["test_total"]}}),
        k if k % 5 == 4 => json!({"to": "coordinator", "type": "test_result",
            "summary": format!("{task}: {rate:.0} % after {iteration} iterations"),
            "data": {"taskId": task, "passRate": rate, "iterations": iteration, "total": 40,
                     "passed": (rate * 0.4) as u32, "qualityGatePassed": rate >= 95.0,
                     "summary": format!("## {task}\n\n**Status:** {rate:.0} %\n\n- Iterations: {iteration}")}}),
        _ => json!({"to": "coordinator", "type": "impl_progress",
            "summary": format!("{task}: iteration {iteration}, {rate:.0} %"),
            "data": {"taskId": task, "iteration": iteration, "maxIterations": 5, "passRate": rate, "strategy": "conservative"}}),
    }
}

/// Every message's batch goes from one of `testers` in turn.
async fn generate(coord: &Api, testers: &[Api], messages: usize) {
    let started = Instant::now();
    for chunk in (0..TASKS).collect::<Vec<_>>().chunks(BATCH) {
        let tasks: Vec<Value> = chunk
            .iter()
            .map(|&n| {
                let blocked: Vec<String> = if n % 10 == 0 { vec![] } else { vec![task_id(n - 1)] };
                json!({"id": task_id(n), "subject": format!("Suite {n}: checkout and totals"), "blockedBy": blocked})
            })
            .collect();
        coord
            .post(&coord.t("/tasks"), Value::Array(tasks))
            .await
            .expect_status(201);
    }
    for (i, start) in (0..messages).step_by(BATCH).enumerate() {
        let batch: Vec<Value> = (start..(start + BATCH).min(messages))
            .map(message)
            .collect();
        let tester = &testers[i % testers.len()];
        tester
            .post(&tester.t("/messages/batch"), json!({ "messages": batch }))
            .await
            .expect_status(201);
    }
    coord
        .patch(
            &coord.t("/memory"),
            json!({"project": {"name": "shop", "qualityGate": 95}}),
        )
        .await
        .expect_status(200);
    println!(
        "generated {TASKS} tasks and {messages} messages through the API in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

#[tokio::test]
async fn the_dashboard_at_a_large_history() {
    require_browser();
    let messages: usize = std::env::var("HUDDLE_DASHBOARD_MESSAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let d = TestDaemon::start().await;
    let coord = d.team(TEAM).await;
    let tester = d.agent(TEAM, "tester", "tester").await;
    let testers = [
        tester.clone(),
        d.agent(TEAM, "tester2", "tester").await,
        d.agent(TEAM, "tester3", "tester").await,
    ];
    let watcher = d.agent(TEAM, "watcher", "observer").await;
    generate(&coord, &testers, messages).await;

    let extra = [("HUDDLE_TASKS", TASKS.to_string())];
    let mut script = Script::start("large.mjs", &d.url, TEAM, &watcher.token, &extra);
    let mut steps = Vec::new();
    let run = async {
        while let Some(step) = script.next_step().await {
            let reply = match step.as_str() {
                "post-message" => {
                    let summary = format!("live-{}", uuid::Uuid::new_v4().simple());
                    tester
                        .post(
                            &tester.t("/messages"),
                            json!({"to": "coordinator", "type": "note", "summary": summary}),
                        )
                        .await
                        .expect_status(201);
                    summary
                }
                "post-report" => {
                    let task = task_id(TASKS - 1);
                    tester
                        .post(
                            &tester.t("/messages"),
                            json!({"to": "coordinator", "type": "test_result", "summary": "fresh",
                                   "data": {"taskId": task, "passRate": 97.5, "iterations": 2, "qualityGatePassed": true}}),
                        )
                        .await
                        .expect_status(201);
                    task
                }
                "api-counts" => api_counts(&coord).await.to_string(),
                other => panic!("the script asked for an unknown step: {other}"),
            };
            steps.push(step.clone());
            script.reply(&step, &reply).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(600), run)
        .await
        .expect("the browser script finished within 10 minutes");
    script.finish().await;
    assert_eq!(steps, ["post-message", "post-report", "api-counts"]);
}

/// What the API answers over the whole history, for the page to match: every message, the
/// `fix_required`s, tester2's `test_result`s, each agent's messages, the tasks that reported a
/// pass rate, the worst latest one, and TEST-0042's reports.
async fn api_counts(api: &Api) -> Value {
    let total = |query: String| async move {
        api.get(&api.t(&format!("/messages/search?limit=1{query}")))
            .await
            .expect_status(200)
            .body["total"]
            .clone()
    };
    let agents = api.get(&api.t("/agents")).await.expect_status(200).body;
    let mut sent = serde_json::Map::new();
    for agent in agents["agents"].as_array().unwrap() {
        let name = agent["name"].as_str().unwrap();
        sent.insert(name.into(), total(format!("&from={name}")).await);
    }
    let worst = api
        .get(&api.t("/progress?sort=rate&dir=asc&limit=1"))
        .await
        .expect_status(200)
        .body;
    let reports = |kind: &str| total(format!("&task=TEST-0042&type={kind}"));
    let task_reports = reports("test_result").await.as_u64().unwrap()
        + reports("impl_progress").await.as_u64().unwrap();
    let counts = json!({
        "task42Reports": task_reports,
        "progressTasks": worst["total"],
        "worstRate": worst["messages"][0]["data"]["passRate"],
        "all": total(String::new()).await,
        "fixRequired": total("&type=fix_required".into()).await,
        "tester2Results": total("&type=test_result&from=tester2".into()).await,
        "sent": sent,
    });
    assert!(counts["fixRequired"].as_u64().unwrap() > 0, "{counts}");
    counts
}
