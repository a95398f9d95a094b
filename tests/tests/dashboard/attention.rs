//! What needs a person, first (`tests/dashboard-e2e/attention.mjs`): a regression and an error
//! posted before the page opens are listed from the history; then a scripted sequence of API
//! calls — a question, a `fix_required`, a task that fails, a `test_result` under the gate — and
//! after each the attention panel lists exactly what waits, linked to its task; an answer and a
//! retry given in the panel reach the API. The board is above the dependency graph, an
//! in-progress card shows its iteration and pass rate, a completed card under the gate is not
//! green, and Cancel asks first: until the person confirms, the task stays as it was.

use super::browser::require_browser;
use super::script::Script;
use huddle_tests::{eventually, Api, TestDaemon};
use serde_json::{json, Value};
use std::time::Duration;

const TEAM: &str = "qa";

async fn task(api: &Api, id: &str) -> Value {
    api.get(&api.t(&format!("/tasks/{id}")))
        .await
        .expect_status(200)
        .body
}

async fn create(coord: &Api, tasks: Value) {
    coord
        .post(&coord.t("/tasks"), tasks)
        .await
        .expect_status(201);
}

/// The tester claims the one ready task, which must be `id`.
async fn claim(tester: &Api, id: &str) {
    let claimed = tester.claim(json!({})).await.expect("a ready task");
    assert_eq!(claimed["id"], id, "{claimed}");
}

async fn post(tester: &Api, message: Value) -> Value {
    tester
        .post(&tester.t("/messages"), message)
        .await
        .expect_status(201)
        .body
}

#[tokio::test]
async fn what_needs_a_person_comes_first() {
    require_browser();
    let d = TestDaemon::start().await;
    let coord = d.team(TEAM).await;
    let tester = d.agent(TEAM, "tester", "tester").await;

    // Before the page opens: TEST-001 in a fix cycle (iteration 3 at 72 %) that hit an error,
    // TEST-007 done but regressed, TEST-002 and TEST-006 waiting on TEST-001, TEST-003 ready.
    create(
        &coord,
        json!([{"id": "TEST-001", "subject": "Checkout totals"}]),
    )
    .await;
    claim(&tester, "TEST-001").await;
    // TEST-007 passed the gate, then a later run fell back: a regression.
    create(&coord, json!([{"id": "TEST-007", "subject": "Search"}])).await;
    claim(&tester, "TEST-007").await;
    tester
        .post(
            &tester.t("/tasks/TEST-007/complete"),
            json!({"result": {"passRate": 96.0}}),
        )
        .await
        .expect_status(200);
    for rate in [99.0, 96.0] {
        post(&tester, json!({"to": "coordinator", "type": "test_result", "summary": format!("TEST-007: {rate} %"),
            "data": {"taskId": "TEST-007", "passRate": rate, "iterations": 1, "qualityGatePassed": true}}))
        .await;
    }
    create(
        &coord,
        json!([
            {"id": "TEST-002", "subject": "Refunds", "blockedBy": ["TEST-001"]},
            {"id": "TEST-003", "subject": "Nightly migration"},
            {"id": "TEST-006", "subject": "Old exporter", "blockedBy": ["TEST-001"]}
        ]),
    )
    .await;
    post(
        &tester,
        json!({"to": "coordinator", "type": "impl_progress", "summary": "TEST-001: iteration 3",
        "data": {"taskId": "TEST-001", "iteration": 3, "maxIterations": 5, "passRate": 72.0}}),
    )
    .await;
    post(
        &tester,
        json!({"to": "coordinator", "type": "error", "summary": "pytest crashed on TEST-001",
        "data": {"taskId": "TEST-001", "code": "runner_crashed", "message": "segfault"}}),
    )
    .await;

    let mut script = Script::start("attention.mjs", &d.url, TEAM, &coord.token, &[]);
    let mut steps = Vec::new();
    let mut fix_seq = Value::Null;
    let run = async {
        while let Some(step) = script.next_step().await {
            let reply = match step.as_str() {
                "question" => {
                    let asked = coord
                        .post(
                            &coord.t("/tasks/TEST-003/gate"),
                            json!({"question": "May the migration run **tonight**?"}),
                        )
                        .await
                        .expect_status(201)
                        .body;
                    asked["question"]["id"].as_str().unwrap().to_string()
                }
                "fix-required" => {
                    let m = post(&tester, json!({"to": "coordinator", "type": "fix_required",
                        "summary": "TEST-001: the fixture database is missing",
                        "data": {"taskId": "TEST-001", "reason": "environment", "category": "environment", "tests": ["test_total"]}}))
                    .await;
                    fix_seq = m["seq"].clone();
                    m["seq"].to_string()
                }
                "fail" => {
                    create(&coord, json!([{"id": "TEST-004", "subject": "Coupons"}])).await;
                    claim(&tester, "TEST-004").await;
                    tester
                        .post(
                            &tester.t("/tasks/TEST-004/fail"),
                            json!({"reason": "the coupon service is down", "final": true}),
                        )
                        .await
                        .expect_status(200);
                    String::new()
                }
                "gate-missed" => {
                    create(&coord, json!([{"id": "TEST-005", "subject": "Invoices"}])).await;
                    claim(&tester, "TEST-005").await;
                    tester
                        .post(
                            &tester.t("/tasks/TEST-005/complete"),
                            json!({"result": {"passRate": 72.0, "qualityGatePassed": false}}),
                        )
                        .await
                        .expect_status(200);
                    post(&tester, json!({"to": "coordinator", "type": "test_result",
                        "summary": "TEST-005: 72 % (18 of 25), under the gate",
                        "data": {"taskId": "TEST-005", "passRate": 72.0, "iterations": 5, "total": 25, "passed": 18,
                                 "failed": 7, "qualityGatePassed": false}}))
                    .await;
                    String::new()
                }
                "answered-fix" => {
                    let answers = coord
                        .get(&coord.t("/messages/search?type=fix_answer&limit=10"))
                        .await
                        .expect_status(200)
                        .body;
                    let answer = &answers["messages"][0];
                    assert_eq!(answers["total"], 1, "{answers}");
                    assert_eq!(answer["data"]["replyTo"], fix_seq, "{answer}");
                    assert_eq!(answer["to"], "tester", "{answer}");
                    assert_eq!(answer["data"]["answer"], "Run make fixtures first.");
                    String::new()
                }
                "retried" => {
                    let t = task(&coord, "TEST-004").await;
                    assert_eq!(t["status"], "pending", "{t}");
                    String::new()
                }
                "cancel-asked" => {
                    let t = task(&coord, "TEST-006").await;
                    assert_eq!(
                        t["status"], "pending",
                        "not cancelled before the confirmation: {t}"
                    );
                    String::new()
                }
                "cancel-confirmed" => {
                    eventually(30, "TEST-006 cancelled", || async {
                        task(&coord, "TEST-006").await["status"] == "cancelled"
                    })
                    .await;
                    String::new()
                }
                other => panic!("the script asked for an unknown step: {other}"),
            };
            steps.push(step.clone());
            script.reply(&step, &reply).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(240), run)
        .await
        .expect("the browser script finished within 4 minutes");
    script.finish().await;
    assert_eq!(
        steps,
        [
            "question",
            "fix-required",
            "fail",
            "gate-missed",
            "answered-fix",
            "retried",
            "cancel-asked",
            "cancel-confirmed"
        ],
        "every step ran, in order"
    );
}
