//! Each task's newest pass-rate report over real HTTP (`GET …/progress`): one per task however
//! long ago it was posted (a task that stopped at 72 % under a thousand later messages is still
//! the worst), only `test_result`/`impl_progress` with a numeric `passRate` about a task of the
//! team count, worst first by default, pages by `offset`, bad parameters get 400 naming the
//! field, and another team's token or the admin's find nothing.

use huddle_tests::{Api, TestDaemon};
use serde_json::{json, Value};

async fn post(tester: &Api, messages: Vec<Value>) {
    tester
        .post(
            &tester.t("/messages/batch"),
            json!({ "messages": messages }),
        )
        .await
        .expect_status(201);
}

fn report(kind: &str, task: &str, rate: Value) -> Value {
    json!({"to": "coordinator", "type": kind, "summary": format!("{task}: {rate}"),
           "data": {"taskId": task, "passRate": rate, "iteration": 1, "iterations": 1}})
}

/// The pages' `data.taskId` and `data.passRate`, in order.
fn rows(page: &Value) -> Vec<(String, f64)> {
    page["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["data"]["taskId"].as_str().unwrap().to_string(),
                m["data"]["passRate"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn each_tasks_newest_report_over_the_whole_history_worst_first() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    let tasks: Vec<Value> = (1..=4)
        .map(|n| json!({"id": format!("TEST-00{n}"), "subject": format!("suite {n}")}))
        .collect();
    c.post(&c.t("/tasks"), Value::Array(tasks))
        .await
        .expect_status(201);

    post(
        &tester,
        vec![
            report("impl_progress", "TEST-001", json!(50.0)),
            report("test_result", "TEST-001", json!(72.0)),
            report("test_result", "TEST-002", json!(90.0)),
            report("impl_progress", "TEST-003", json!(80.0)),
            // Not reports: a rate that is not a number, a task the team does not have.
            report("test_result", "TEST-003", json!("100")),
            report("test_result", "TEST-999", json!(10.0)),
        ],
    )
    .await;
    // A thousand later messages bury TEST-001's report; TEST-002 reports again.
    for _ in 0..2 {
        let notes = (0..500)
            .map(|n| {
                json!({"to": "*", "type": "note", "summary": format!("note {n}"),
                            "data": {"taskId": "TEST-003"}})
            })
            .collect();
        post(&tester, notes).await;
    }
    post(
        &tester,
        vec![report("test_result", "TEST-002", json!(99.0))],
    )
    .await;

    let worst = c.get(&c.t("/progress")).await.expect_status(200).body;
    assert_eq!(worst["total"], 3, "{worst}");
    assert_eq!(
        rows(&worst),
        [
            ("TEST-001".into(), 72.0),
            ("TEST-003".into(), 80.0),
            ("TEST-002".into(), 99.0)
        ],
        "each task's newest report, worst first"
    );
    assert_eq!(worst["next"], Value::Null);
    let best = c
        .get(&c.t("/progress?sort=rate&dir=desc"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(rows(&best)[0], ("TEST-002".into(), 99.0));
    let recent = c
        .get(&c.t("/progress?sort=recent&dir=desc"))
        .await
        .expect_status(200)
        .body;
    let order: Vec<String> = rows(&recent).into_iter().map(|(id, _)| id).collect();
    assert_eq!(order, ["TEST-002", "TEST-003", "TEST-001"], "newest first");

    // Pages by offset.
    let first = c
        .get(&c.t("/progress?limit=2"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(rows(&first).len(), 2);
    assert_eq!(first["next"], 2, "{first}");
    let second = c
        .get(&c.t("/progress?limit=2&offset=2"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(rows(&second), [("TEST-002".into(), 99.0)]);
    assert_eq!(second["next"], Value::Null);

    for (query, field) in [
        ("sort=worst", "sort"),
        ("dir=up", "dir"),
        ("limit=0", "limit"),
        ("offset=100001", "offset"),
    ] {
        let r = c
            .get(&c.t(&format!("/progress?{query}")))
            .await
            .expect_status(400);
        assert!(r.body.to_string().contains(field), "{query}: {}", r.body);
    }
    c.get(&c.t("/progress?bogus=1"))
        .await
        .expect_error(400, "invalid_query");

    let other = d.team("other").await;
    other
        .get("/v1/teams/qa/progress")
        .await
        .expect_error(404, "not_found");
    d.admin()
        .get("/v1/teams/qa/progress")
        .await
        .expect_error(403, "forbidden");
}
