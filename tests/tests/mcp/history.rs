//! The test history as MCP tools, spoken as raw JSON-RPC over `/mcp`: a tester posts runs with
//! `history_post`, an observer reads the trend, flaky tests and regressions with
//! `history_get` and may not post (the API's 403, as a tool error).

use huddle_tests::TestDaemon;
use serde_json::{json, Value};

pub(crate) async fn call(d: &TestDaemon, token: &str, tool: &str, arguments: Value) -> Value {
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

/// A tool answer's JSON (its text content), and whether it is an error.
pub(crate) fn answer(result: &Value) -> (Value, bool) {
    let text = result["content"][0]["text"].as_str().unwrap_or("null");
    (
        serde_json::from_str(text).unwrap_or(Value::Null),
        result["isError"] == true,
    )
}

#[tokio::test]
async fn history_tools_post_runs_and_answer_flaky_tests_and_regressions() {
    let d = TestDaemon::start().await;
    d.team("qa").await;
    let tester = d.agent("qa", "tester", "tester").await;
    let observer = d.agent("qa", "watcher", "observer").await;
    for (coin, old) in [("passed", "passed"), ("failed", "failed")] {
        let posted = call(
            &d,
            &tester.token,
            "history_post",
            json!({"project": "calc", "tree": "t1", "outcomes": [
                {"nodeid": "coin", "outcome": coin}, {"nodeid": "old", "outcome": old},
            ]}),
        )
        .await;
        let (run, error) = answer(&posted);
        assert!(!error, "{posted}");
        assert_eq!(run["project"], "calc");
    }

    let (runs, _) = answer(&call(&d, &observer.token, "history_get", json!({})).await);
    assert_eq!(runs["project"], "calc");
    assert_eq!(runs["runs"].as_array().map(Vec::len), Some(2), "{runs}");
    let (flaky, _) = answer(
        &call(
            &d,
            &observer.token,
            "history_get",
            json!({"view": "flaky", "tree": "t1"}),
        )
        .await,
    );
    let names: Vec<&str> = flaky["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["nodeid"].as_str())
        .collect();
    assert_eq!(names, ["coin", "old"], "{flaky}");
    let (regressions, _) = answer(
        &call(
            &d,
            &observer.token,
            "history_get",
            json!({"view": "regressions", "project": "calc"}),
        )
        .await,
    );
    assert_eq!(regressions["tests"].as_array().map(Vec::len), Some(2));

    let refused = call(
        &d,
        &observer.token,
        "history_post",
        json!({"project": "calc", "tree": "t2", "outcomes": []}),
    )
    .await;
    assert!(answer(&refused).1, "{refused}");
    assert_eq!(
        refused["structuredContent"]["error"]["code"], "forbidden",
        "{refused}"
    );
    let bad = call(
        &d,
        &tester.token,
        "history_get",
        json!({"view": "sideways"}),
    )
    .await;
    assert!(answer(&bad).1, "{bad}");
}

#[tokio::test]
async fn history_get_answers_one_tiers_trend_flaky_tests_and_regressions() {
    let d = TestDaemon::start().await;
    d.team("qa").await;
    let tester = d.agent("qa", "tester", "tester").await;
    let observer = d.agent("qa", "watcher", "observer").await;
    // The unit tier passes on both trees; the integration tier fails, then passes on t1
    // (flaky there), then fails on t2 (a regression).
    for (tree, tier, nodeid, outcome) in [
        ("t1", "unit", "u::a", "passed"),
        ("t1", "integration", "i::api", "failed"),
        ("t1", "integration", "i::api", "passed"),
        ("t2", "unit", "u::a", "passed"),
        ("t2", "integration", "i::api", "failed"),
    ] {
        let posted = call(
            &d,
            &tester.token,
            "history_post",
            json!({"project": "calc", "tree": tree, "tier": tier,
                   "outcomes": [{"nodeid": nodeid, "outcome": outcome}]}),
        )
        .await;
        assert!(!answer(&posted).1, "{posted}");
    }
    let get = |args: Value| {
        let token = observer.token.clone();
        let d = &d;
        async move { answer(&call(d, &token, "history_get", args).await) }
    };
    let tiers_of = |runs: &Value| -> Vec<String> {
        runs["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["tier"].as_str().unwrap_or("?").to_string())
            .collect()
    };
    // Without a tier, only whole-suite runs: the tier runs repeat their executions.
    let whole = call(
        &d,
        &tester.token,
        "history_post",
        json!({"project": "calc", "tree": "t2",
               "outcomes": [{"nodeid": "u::a", "outcome": "passed"}]}),
    )
    .await;
    assert!(!answer(&whole).1, "{whole}");
    let (all, _) = get(json!({})).await;
    assert_eq!(tiers_of(&all), ["?"], "{all}");
    let (unit, error) = get(json!({"tier": "unit"})).await;
    assert!(!error, "{unit}");
    assert_eq!(tiers_of(&unit), ["unit", "unit"]);
    let (integration, _) = get(json!({"tier": "integration"})).await;
    assert_eq!(tiers_of(&integration), ["integration"; 3]);

    let (flaky, _) = get(json!({"view": "flaky", "tier": "integration"})).await;
    assert_eq!(flaky["tests"][0]["nodeid"], "i::api", "{flaky}");
    let (no_flaky, _) = get(json!({"view": "flaky", "tier": "unit"})).await;
    assert_eq!(no_flaky["tests"], json!([]), "{no_flaky}");

    let (regressions, _) = get(json!({"view": "regressions", "tier": "integration"})).await;
    assert_eq!(regressions["tests"][0]["nodeid"], "i::api", "{regressions}");
    let (none, _) = get(json!({"view": "regressions", "tier": "unit"})).await;
    assert_eq!(none["tests"], json!([]), "{none}");

    // The schema names the tiers; another word is refused.
    let (_, refused) = get(json!({"tier": "smoke"})).await;
    assert!(refused, "an unknown tier is an error");
}
