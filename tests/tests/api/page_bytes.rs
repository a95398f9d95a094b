//! Lists of large items page by size as well as by count: a memory history of ~0.9 MB
//! documents, a bus of ~60 KB messages (listed, searched, in an inbox) and tasks with 200 KB
//! results answer `limit=100` with fewer items, each answer under `[limits] max_page_bytes`,
//! and following `next` reaches every item once.

use huddle_tests::http::Reply;
use huddle_tests::{Api, TestDaemon};
use serde_json::json;

/// The daemon's default budget (`[limits] max_page_bytes`).
const BUDGET: usize = 2 * 1024 * 1024;

/// The answer's size as sent (its `content-length`), checked against the budget.
fn sent_bytes(reply: &Reply) -> usize {
    reply.headers["content-length"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn a_history_of_large_documents_pages_by_size_and_reaches_every_change() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let blob = "m".repeat(900_000);
    for n in 1..=100 {
        c.put(&c.t("/memory"), json!({"doc": {"n": n, "blob": blob}}))
            .await
            .expect_status(200);
    }
    let mut versions = Vec::new();
    let mut before: Option<i64> = None;
    let mut pages = 0;
    loop {
        let query = match before {
            Some(b) => format!("/memory-history?limit=100&before={b}"),
            None => "/memory-history?limit=100".to_string(),
        };
        let reply = c.get(&c.t(&query)).await.expect_status(200);
        let bytes = sent_bytes(&reply);
        assert!(bytes <= BUDGET, "a page of {bytes} bytes");
        let changes = reply.body["changes"].as_array().unwrap();
        assert!(!changes.is_empty() || reply.body["next"].is_null());
        if pages == 0 {
            assert!(
                changes.len() < 100 && reply.body["next"].is_i64(),
                "limit=100 over ~0.9 MB documents answers a shorter page and a next: {} changes",
                changes.len()
            );
        }
        for change in changes {
            let version = change["version"].as_i64().unwrap();
            assert_eq!(change["patch"]["n"], version, "each change is whole");
            versions.push(version);
        }
        pages += 1;
        match reply.body["next"].as_i64() {
            Some(next) => before = Some(next),
            None => break,
        }
    }
    assert_eq!(
        versions,
        (1..=100).rev().collect::<Vec<i64>>(),
        "paging reaches every change once, newest first, in {pages} pages"
    );
}

async fn post_large(t: &Api, n: usize, to: &str) {
    let filler = "d".repeat(60_000);
    t.post(
        &t.t("/messages"),
        json!({"to": to, "type": "impl_progress", "summary": format!("m{n}"),
               "data": {"n": n, "diff": filler}}),
    )
    .await
    .expect_status(201);
}

fn summaries(reply: &Reply) -> Vec<String> {
    reply.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["summary"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn messages_and_the_inbox_with_large_data_page_by_size() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let t = d.agent("qa", "tester", "tester").await;
    for n in 0..100 {
        post_large(&t, n, "coordinator").await;
    }
    let mut seen = Vec::new();
    let mut after = 0;
    loop {
        let reply = c
            .get(&c.t(&format!("/messages?limit=100&after={after}")))
            .await
            .expect_status(200);
        assert!(sent_bytes(&reply) <= BUDGET, "{}", sent_bytes(&reply));
        let page = summaries(&reply);
        if seen.is_empty() {
            assert!(page.len() < 100, "a shorter first page: {}", page.len());
        }
        seen.extend(page);
        match reply.body["next"].as_i64() {
            Some(next) => after = next,
            None => break,
        }
    }
    let all: Vec<String> = (0..100).map(|n| format!("m{n}")).collect();
    assert_eq!(seen, all, "every message once, in order");

    // A search, newest first: the same pages by size, `total` counting every match.
    let mut found = Vec::new();
    let mut before = String::new();
    loop {
        let reply = c
            .get(&c.t(&format!(
                "/messages/search?type=impl_progress&limit=100{before}"
            )))
            .await
            .expect_status(200);
        assert!(sent_bytes(&reply) <= BUDGET, "{}", sent_bytes(&reply));
        assert_eq!(reply.body["total"], 100);
        let page = summaries(&reply);
        assert!(page.len() < 100, "a shorter page: {}", page.len());
        found.extend(page);
        match reply.body["next"].as_i64() {
            Some(next) => before = format!("&before={next}"),
            None => break,
        }
    }
    found.reverse();
    assert_eq!(found, all, "the search reaches every match once");

    // The inbox: a page under the budget; acknowledging it brings the next.
    let mut read = Vec::new();
    loop {
        let reply = c.get(&c.t("/inbox?limit=100")).await.expect_status(200);
        assert!(sent_bytes(&reply) <= BUDGET);
        let page = summaries(&reply);
        let Some(last) = reply.body["next"].as_i64() else {
            break;
        };
        assert!(page.len() < 100);
        read.extend(page);
        c.post(&c.t("/inbox/ack"), json!({"seq": last}))
            .await
            .expect_status(200);
    }
    assert_eq!(read, all);
}

#[tokio::test]
async fn a_single_item_larger_than_the_budget_still_comes_alone() {
    let d = TestDaemon::start_with(|s| s.limits.max_page_bytes = 10_000).await;
    let c = d.team("qa").await;
    let t = d.agent("qa", "tester", "tester").await;
    for n in 0..3 {
        post_large(&t, n, "*").await;
    }
    let reply = c.get(&c.t("/messages?limit=100")).await.expect_status(200);
    assert_eq!(summaries(&reply), ["m0"]);
    let next = reply.body["next"].as_i64().expect("a next");
    let reply = c
        .get(&c.t(&format!("/messages?after={next}")))
        .await
        .expect_status(200);
    assert_eq!(summaries(&reply), ["m1"]);
}

#[tokio::test]
async fn tasks_with_large_results_page_by_size() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let t = d.agent("qa", "tester", "tester").await;
    let tasks: Vec<_> = (1..=30)
        .map(|n| json!({"id": format!("TEST-{n:03}"), "subject": "s"}))
        .collect();
    c.post(&c.t("/tasks"), json!(tasks))
        .await
        .expect_status(201);
    let diff = "+".repeat(200_000);
    for _ in 0..30 {
        let task = t
            .post(&t.t("/tasks/claim"), json!({"prefixes": ["TEST"]}))
            .await
            .expect_status(200)
            .body;
        let id = task["id"].as_str().unwrap().to_string();
        t.post(
            &t.t(&format!("/tasks/{id}/complete")),
            json!({"result": {"diff": diff}}),
        )
        .await
        .expect_status(200);
    }
    let mut seen = Vec::new();
    let mut after = String::new();
    loop {
        let reply = c
            .get(&c.t(&format!("/tasks?limit=100&after={after}")))
            .await
            .expect_status(200);
        assert!(sent_bytes(&reply) <= BUDGET, "{}", sent_bytes(&reply));
        let page = reply.body["tasks"].as_array().unwrap();
        if seen.is_empty() {
            assert!(page.len() < 30, "a shorter first page: {}", page.len());
        }
        for task in page {
            assert_eq!(task["result"]["diff"].as_str().map(str::len), Some(200_000));
            seen.push(task["id"].as_str().unwrap().to_string());
        }
        match reply.body["next"].as_str() {
            Some(next) => after = next.to_string(),
            None => break,
        }
    }
    let all: Vec<String> = (1..=30).map(|n| format!("TEST-{n:03}")).collect();
    assert_eq!(seen, all, "every task once, in id order");
}

/// The flaky and regression reports are cut at the budget too: the most flaky (and the first
/// regressions by node id) are kept, and `omitted` counts the rest.
#[tokio::test]
async fn flaky_and_regression_reports_stop_at_the_budget_and_count_what_they_left_off() {
    const BUDGET: usize = 8 * 1024;
    let d = TestDaemon::start_with(|s| s.limits.max_page_bytes = BUDGET).await;
    let c = d.team("qa").await;
    let tests = 400;
    let run = |tree: &str, outcome: &str| {
        json!({"project": "calc", "tree": tree,
               "outcomes": (0..tests)
                   .map(|n| json!({"nodeid": format!("tests/test_calc.py::test_case_{n:04}"), "outcome": outcome}))
                   .collect::<Vec<_>>()})
    };
    // Every test passes then fails on one tree (flaky), and fails on the next tree after that
    // pass (a regression).
    for (tree, outcome) in [
        ("t1", "passed"),
        ("t1", "failed"),
        ("t2", "passed"),
        ("t3", "failed"),
    ] {
        c.post(&c.t("/history/runs"), run(tree, outcome))
            .await
            .expect_status(201);
    }
    for (path, key) in [
        ("/history/flaky", "tests"),
        ("/history/regressions", "tests"),
    ] {
        let reply = c.get(&c.t(path)).await.expect_status(200);
        assert!(
            sent_bytes(&reply) <= BUDGET,
            "{path}: {} bytes",
            sent_bytes(&reply)
        );
        let listed = reply.body[key].as_array().unwrap().len() as u64;
        let omitted = reply.body["omitted"].as_u64().unwrap();
        assert!(
            listed > 0 && omitted > 0,
            "{path}: {listed} listed, {omitted} omitted"
        );
        assert_eq!(listed + omitted, tests, "{path}");
    }
}
