//! The model budget and its ledger over HTTP (SQLite, and PostgreSQL with
//! HUDDLE_TEST_BACKEND=postgres): sums under concurrent workers, a spent budget refusing the
//! next call and model-calling claims until it is raised, the warning and exhaustion notices,
//! a task's ceiling, the roles, and at most one call over per worker racing the last of it.

use huddle_tests::{Api, TestDaemon};
use serde_json::{json, Value};
use std::sync::Arc;

async fn reserve(w: &Api, task: &str) -> Result<i64, Value> {
    let r = w
        .post(&w.t("/spend/reserve"), json!({"model": "m1", "task": task}))
        .await;
    match r.status.as_u16() {
        201 => Ok(r.body["id"].as_i64().expect("an id")),
        409 => Err(r.body),
        s => panic!("reserve answered {s}: {}", r.body),
    }
}

async fn settle(w: &Api, id: i64, prompt: u64, completion: u64) -> Value {
    w.post(
        &w.t(&format!("/spend/{id}/settle")),
        json!({"promptTokens": prompt, "completionTokens": completion}),
    )
    .await
    .expect_status(200)
    .body
}

fn group<'a>(report: &'a Value, by: &str, key: &str) -> &'a Value {
    report[by]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["key"] == key)
        .unwrap_or_else(|| panic!("no {key} in {by}: {report}"))
}

#[tokio::test]
async fn the_ledger_adds_up_exactly_under_concurrent_workers() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    // Priced: 2 micro-units a prompt token, 10 a completion token.
    c.put(
        &c.t("/budget"),
        json!({"prices": {"m1": {"promptPerMillion": 2_000_000, "completionPerMillion": 10_000_000}}}),
    )
    .await
    .expect_status(200);
    let mut jobs = Vec::new();
    for i in 0..8u64 {
        let w = d.agent("qa", &format!("tester-{i}"), "tester").await;
        jobs.push(tokio::spawn(async move {
            for _ in 0..10 {
                let task = format!("TEST-00{}", i % 2 + 1);
                let id = reserve(&w, &task).await.expect("no budget limit");
                let call = settle(&w, id, 100 + i, 7).await;
                assert_eq!(call["costMicros"], (100 + i) * 2 + 7 * 10);
            }
        }));
    }
    for j in jobs {
        j.await.unwrap();
    }
    let report = c.get(&c.t("/spend")).await.expect_status(200).body;
    let prompt: u64 = (0..8).map(|i| (100 + i) * 10).sum();
    let total = &report["total"];
    assert_eq!(total["calls"], 80);
    assert_eq!(total["promptTokens"], prompt);
    assert_eq!(total["completionTokens"], 80 * 7);
    assert_eq!(total["tokens"], prompt + 560);
    assert_eq!(total["costMicros"], prompt * 2 + 560 * 10);
    for i in 0..8u64 {
        let agent = group(&report, "byAgent", &format!("tester-{i}"));
        assert_eq!(agent["calls"], 10);
        assert_eq!(agent["promptTokens"], (100 + i) * 10);
    }
    let even: u64 = (0..8).step_by(2).map(|i| (100 + i) * 10).sum();
    assert_eq!(group(&report, "byTask", "TEST-001")["promptTokens"], even);
    assert_eq!(group(&report, "byModel", "m1")["calls"], 80);
    assert_eq!(report["byDay"].as_array().unwrap().len(), 1);
    // One task's report.
    let one = c.get(&c.t("/spend?task=TEST-002")).await.expect_status(200);
    assert_eq!(one.body["total"]["promptTokens"], prompt - even);
    // The budget's view counts the same.
    let budget = c.get(&c.t("/budget")).await.expect_status(200).body;
    assert_eq!(budget["spent"]["tokens"], prompt + 560);
    assert_eq!(budget["exhausted"], false);
    // And /metrics, per team.
    let metrics = d.admin().get("/metrics").await.expect_status(200).body;
    let text = metrics.as_str().expect("the text format");
    assert!(
        text.contains("huddle_team_model_calls{team=\"qa\"} 80"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "huddle_team_model_prompt_tokens{{team=\"qa\"}} {prompt}"
        )),
        "{text}"
    );
}

#[tokio::test]
async fn a_spent_budget_refuses_calls_and_model_claims_until_it_is_raised() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let w = d.agent("qa", "tester-1", "tester").await;
    c.post(
        &c.t("/tasks"),
        json!([{"id": "TEST-001", "subject": "a"}, {"id": "DOC-001", "subject": "b"}]),
    )
    .await
    .expect_status(201);
    let set = c
        .put(
            &c.t("/budget"),
            json!({"maxTokens": 1000, "warnPercent": 50}),
        )
        .await
        .expect_status(200);
    assert_eq!(set.body["version"], 1);
    assert_eq!(set.headers["etag"], "\"1\"");

    // 600 of 1000: past the warning threshold, the coordinators are told once.
    let id = reserve(&w, "TEST-001").await.unwrap();
    settle(&w, id, 500, 100).await;
    let id = reserve(&w, "TEST-001").await.unwrap();
    settle(&w, id, 300, 150).await;
    // 1050: spent. The next call is refused, naming the limit.
    let refused = reserve(&w, "TEST-001").await.unwrap_err();
    assert_eq!(refused["error"]["code"], "budget_exceeded");
    assert_eq!(
        refused["error"]["details"],
        json!({"scope": "team", "limit": "tokens", "max": 1000, "spent": 1050, "period": "total"})
    );
    let messages = c
        .get(&c.t("/messages?to=coordinator"))
        .await
        .expect_status(200)
        .body;
    let kinds: Vec<&str> = messages["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["budget_warning", "budget_exceeded"], "{messages}");

    // A claim declaring a model takes no TEST task; the task stays ready.
    w.post(&w.t("/tasks/claim"), json!({"model": "m1"}))
        .await
        .expect_error(409, "budget_exceeded");
    let other = w
        .claim(json!({"model": "m1", "prefixes": ["TEST", "DOC"]}))
        .await
        .expect("the DOC task");
    assert_eq!(other["id"], "DOC-001");
    let task = c.get(&c.t("/tasks/TEST-001")).await.expect_status(200);
    assert_eq!(task.body["status"], "pending");

    // A stale raise is refused; the current one lets work resume.
    c.send(
        reqwest::Method::PUT,
        &c.t("/budget"),
        Some(json!({"maxTokens": 5000}).to_string().into_bytes()),
        &[("If-Match", "0")],
    )
    .await
    .expect_error(412, "stale_version");
    let raised = c
        .send(
            reqwest::Method::PUT,
            &c.t("/budget"),
            Some(json!({"maxTokens": 5000}).to_string().into_bytes()),
            &[("If-Match", "\"1\"")],
        )
        .await
        .expect_status(200);
    assert_eq!(raised.body["version"], 2);
    assert_eq!(raised.body["remainingTokens"], 3950);
    assert_eq!(raised.body["exhausted"], false);
    let resumed = w.claim(json!({"model": "m1"})).await.expect("TEST-001");
    assert_eq!(resumed["id"], "TEST-001");
    assert!(reserve(&w, "TEST-001").await.is_ok());
}

#[tokio::test]
async fn a_task_ceiling_refuses_that_task_only_and_roles_are_kept() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let w = d.agent("qa", "tester-1", "tester").await;
    let other = d.agent("qa", "tester-2", "tester").await;
    let observer = d.agent("qa", "watcher", "observer").await;
    c.put(&c.t("/budget"), json!({"taskMaxTokens": 50}))
        .await
        .expect_status(200);
    let id = reserve(&w, "TEST-001").await.unwrap();
    settle(&w, id, 40, 20).await;
    let refused = reserve(&w, "TEST-001").await.unwrap_err();
    assert_eq!(refused["error"]["details"]["scope"], "task");
    assert_eq!(refused["error"]["details"]["task"], "TEST-001");
    assert!(reserve(&w, "TEST-002").await.is_ok());

    // Settling: only one's own call, and only once.
    let id = reserve(&w, "TEST-002").await.unwrap();
    other
        .post(
            &other.t(&format!("/spend/{id}/settle")),
            json!({"promptTokens": 1}),
        )
        .await
        .expect_error(404, "not_found");
    settle(&w, id, 1, 1).await;
    w.post(&w.t(&format!("/spend/{id}/settle")), json!({}))
        .await
        .expect_error(409, "already_settled");

    // Roles: every agent reads, workers record, coordinators and the admin set.
    observer
        .get(&observer.t("/budget"))
        .await
        .expect_status(200);
    observer.get(&observer.t("/spend")).await.expect_status(200);
    observer
        .post(&observer.t("/spend/reserve"), json!({"model": "m1"}))
        .await
        .expect_error(403, "forbidden");
    w.put(&w.t("/budget"), json!({}))
        .await
        .expect_error(403, "forbidden");
    d.admin()
        .put("/v1/teams/qa/budget", json!({"maxTokens": 10}))
        .await
        .expect_status(200);
    // Bad input: the API's error shape.
    c.put(&c.t("/budget"), json!({"warnPercent": 0}))
        .await
        .expect_error(400, "invalid_field");
    w.post(
        &w.t("/spend/reserve"),
        json!({"model": "", "task": "TEST-001"}),
    )
    .await
    .expect_error(400, "invalid_field");
    w.post(
        &w.t("/spend/reserve"),
        json!({"model": "m", "task": "nope"}),
    )
    .await
    .expect_error(400, "invalid_field");
}

#[tokio::test]
async fn eight_workers_racing_the_last_of_a_budget_overspend_by_at_most_eight_calls() {
    const LIMIT: u64 = 1_000;
    const CALL: u64 = 30;
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    c.put(&c.t("/budget"), json!({"maxTokens": LIMIT}))
        .await
        .expect_status(200);
    let start = Arc::new(tokio::sync::Barrier::new(8));
    let mut jobs = Vec::new();
    for i in 0..8 {
        let w = d.agent("qa", &format!("tester-{i}"), "tester").await;
        let start = start.clone();
        jobs.push(tokio::spawn(async move {
            start.wait().await;
            let mut granted = 0u64;
            // Each worker holds one reservation at a time, as the built-in roles do.
            while let Ok(id) = reserve(&w, &format!("TEST-00{i}")).await {
                settle(&w, id, CALL, 0).await;
                granted += 1;
            }
            granted
        }));
    }
    let mut granted = 0;
    for j in jobs {
        granted += j.await.unwrap();
    }
    let spent = c.get(&c.t("/budget")).await.expect_status(200).body;
    assert_eq!(spent["spent"]["tokens"], granted * CALL);
    assert_eq!(spent["exhausted"], true);
    assert!(
        granted * CALL >= LIMIT,
        "stopped before the limit: {granted} calls"
    );
    let over = granted * CALL - LIMIT;
    assert!(
        over < 8 * CALL,
        "{granted} calls of {CALL} tokens overspent {LIMIT} by {over}, more than one call each"
    );
}

/// One MCP tool call over raw JSON-RPC; the tool's result.
async fn mcp(d: &TestDaemon, token: &str, tool: &str, arguments: Value) -> Value {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    });
    let response = reqwest::Client::new()
        .post(format!("{}/mcp", d.url))
        .header("accept", "application/json, text/event-stream")
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .expect("request");
    assert_eq!(response.status().as_u16(), 200);
    let reply: Value = response.json().await.expect("a JSON-RPC answer");
    reply["result"].clone()
}

#[tokio::test]
async fn mcp_reserves_settles_and_is_refused_like_rest() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let w = d.agent("qa", "tester-1", "tester").await;
    let set = mcp(
        &d,
        &c.token,
        "budget_set",
        json!({"budget": {"maxTokens": 100}}),
    )
    .await;
    assert_eq!(set["structuredContent"]["version"], 1, "{set}");
    let call = mcp(
        &d,
        &w.token,
        "spend_reserve",
        json!({"model": "m1", "task": "TEST-001"}),
    )
    .await;
    let id = call["structuredContent"]["id"].as_i64().expect("an id");
    let settled = mcp(
        &d,
        &w.token,
        "spend_settle",
        json!({"id": id, "promptTokens": 90, "completionTokens": 20}),
    )
    .await;
    assert_eq!(settled["structuredContent"]["settled"], true, "{settled}");
    let refused = mcp(&d, &w.token, "spend_reserve", json!({"model": "m1"})).await;
    assert_eq!(refused["isError"], true);
    assert_eq!(
        refused["structuredContent"]["error"]["code"], "budget_exceeded",
        "{refused}"
    );
    let report = mcp(&d, &w.token, "spend_report", json!({"task": "TEST-001"})).await;
    assert_eq!(report["structuredContent"]["total"]["tokens"], 110);
    let budget = mcp(&d, &w.token, "budget_get", json!({})).await;
    assert_eq!(budget["structuredContent"]["exhausted"], true);
}
