//! People in the loop, in the page (`tests/dashboard-e2e/gates.mjs`): a coordinator gates a
//! task through the API, the attention panel and the tab title's count appear, the answer is
//! given in the page, and this side checks through the API that the question is completed and
//! the gated task claimable; the task's page opens with its verdict (a tester's report, what
//! fails, the diff, the gate and its answer); "Ask a person" from a task's detail; the Webhooks view shows a
//! delivery made to a real receiver; an approval gate rejected with a reason in the panel
//! cancels its task; a person-only gate offers a coordinator no buttons and a lead Approve and
//! Reject; an observer sees the panel without answer controls.

use super::browser::{require_browser, screenshot_dir};
use super::script::Script;
use huddle_tests::webhook_receiver::Receiver;
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

/// Gates `id` through the API; the question's id.
async fn gate(coord: &Api, id: &str, question: &str) -> String {
    let gated = coord
        .post(
            &coord.t(&format!("/tasks/{id}/gate")),
            json!({ "question": question }),
        )
        .await
        .expect_status(201)
        .body;
    gated["question"]["id"].as_str().unwrap().to_string()
}

/// `qid` is completed with `answer` by the coordinator, and `gated` is ready to claim.
async fn released(coord: &Api, qid: &str, answer: &str, gated: &str) {
    let question = task(coord, qid).await;
    assert_eq!(question["status"], "completed", "{question}");
    assert_eq!(
        question["result"],
        json!({"answer": answer, "answeredBy": "coordinator", "answeredAs": "coordinator"})
    );
    assert!(
        ready(coord).await.contains(&gated.to_string()),
        "{gated} is ready"
    );
}

/// The ids of the team's ready tasks.
async fn ready(coord: &Api) -> Vec<String> {
    let list = coord
        .get(&coord.t("/tasks?ready=true"))
        .await
        .expect_status(200)
        .body;
    list["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_person_answers_a_gate_in_the_page_and_the_task_is_released() {
    require_browser();
    let d = TestDaemon::start_with(|s| {
        s.webhooks.allow_private = true;
        s.webhooks.poll_ms = 20;
        s.webhooks.retry_base_ms = 20;
    })
    .await;
    // The first delivery is refused once, so the view shows a second attempt.
    let receiver = Receiver::start(&[500]).await;
    let coord = d.team(TEAM).await;
    let tester = d.agent(TEAM, "tester", "tester").await;
    let observer = d.agent(TEAM, "watcher", "observer").await;
    let lead = d.agent(TEAM, "dana", "lead").await;
    coord
        .post(
            &coord.t("/webhooks"),
            json!({"url": receiver.url, "events": ["needs_human"]}),
        )
        .await
        .expect_status(201);
    // Only TEST-001 is the tester's to claim; the others wait for an executor.
    for (id, subject, owner) in [
        ("TEST-001", "Drop the legacy table", None),
        ("TEST-002", "Rotate the staging keys", Some("executor")),
        ("TEST-003", "Delete the old buckets", Some("executor")),
        ("TEST-004", "Change calc.py", Some("executor")),
        ("TEST-005", "Drop the billing index", Some("executor")),
    ] {
        coord
            .post(
                &coord.t("/tasks"),
                json!({"id": id, "subject": subject, "owner": owner}),
            )
            .await
            .expect_status(201);
    }

    let extra = [
        ("HUDDLE_OBSERVER_TOKEN", observer.token.clone()),
        ("HUDDLE_LEAD_TOKEN", lead.token.clone()),
    ];
    let mut script = Script::start("gates.mjs", &d.url, TEAM, &coord.token, &extra);
    let mut steps = Vec::new();
    let run = async {
        while let Some(step) = script.next_step().await {
            let mut words = step.split(' ');
            let word = words.next().unwrap_or_default().to_string();
            let arg = words.next().unwrap_or_default().to_string();
            let mut reply = String::new();
            match word.as_str() {
                "gate" => {
                    reply = gate(
                        &coord,
                        "TEST-001",
                        "May the tester drop the legacy table?\nIt holds **2 GB** of old sessions.",
                    )
                    .await;
                }
                "answered" => {
                    released(&coord, &arg, "Yes, after the backup.", "TEST-001").await;
                    let claimed = tester
                        .claim(json!({}))
                        .await
                        .expect("TEST-001 is claimable");
                    assert_eq!(claimed["id"], "TEST-001", "{claimed}");
                }
                "report" => {
                    tester
                        .post(
                            &tester.t("/messages"),
                            json!({"to": "coordinator", "type": "test_result",
                                   "summary": "TEST-001: 80 % (4 of 5), below the gate",
                                   "data": {"taskId": "TEST-001", "passRate": 80.0, "qualityGate": 95.0,
                                            "qualityGatePassed": false, "counts": "4 passed, 1 failed",
                                            "failures": [{"nodeid": "tests/test_calc.py::test_average",
                                                          "message": "assert 2.5 == 3"}],
                                            "changedFiles": ["calc.py"],
                                            "diff": "--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-    return total_sum / len(items)\n+    return total_sum / count_of_items"}}),
                        )
                        .await
                        .expect_status(201);
                }
                "asked" => {
                    let gated = task(&coord, "TEST-002").await;
                    let blockers = gated["blockedBy"].as_array().unwrap();
                    assert_eq!(blockers.len(), 1, "{gated}");
                    assert_eq!(blockers[0], arg.as_str(), "{gated}");
                    let question = task(&coord, &arg).await;
                    assert_eq!(question["owner"], "human", "{question}");
                    assert_eq!(question["metadata"]["gate"]["for"], "TEST-002");
                    assert!(
                        !ready(&coord).await.contains(&"TEST-002".to_string()),
                        "held"
                    );
                }
                "released" => {
                    released(&coord, &arg, "Rotate them tonight.", "TEST-002").await;
                }
                "delivered" => {
                    // Both questions were told: the first after a refused attempt.
                    let delivered = || async {
                        let sent = coord
                            .get(&coord.t("/webhooks/deliveries"))
                            .await
                            .expect_status(200)
                            .body;
                        sent["deliveries"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .filter(|d| d["status"] == "delivered")
                            .map(|d| d["id"].to_string())
                            .collect::<Vec<_>>()
                    };
                    eventually(60, "two deliveries", || async {
                        delivered().await.len() == 2
                    })
                    .await;
                    assert_eq!(receiver.received().len(), 3, "one refused, two accepted");
                    reply = delivered().await.join(",");
                }
                "gate-approval" => {
                    let gated = coord
                        .post(
                            &coord.t("/tasks/TEST-004/gate"),
                            json!({"question": "May the tester change calc.py?", "kind": "approval"}),
                        )
                        .await
                        .expect_status(201)
                        .body;
                    reply = gated["question"]["id"].as_str().unwrap().to_string();
                }
                "rejected" => {
                    let question = task(&coord, &arg).await;
                    assert_eq!(question["status"], "completed", "{question}");
                    assert_eq!(question["result"]["decision"], "reject", "{question}");
                    let gated = task(&coord, "TEST-004").await;
                    assert_eq!(gated["status"], "cancelled", "{gated}");
                    assert_eq!(
                        gated["failureReason"], "Billing freezes this week; leave calc.py alone.",
                        "{gated}"
                    );
                }
                "gate-person-only" => {
                    let gated = coord
                        .post(
                            &coord.t("/tasks/TEST-005/gate"),
                            json!({"question": "May the index go?", "kind": "approval",
                                   "personOnly": true}),
                        )
                        .await
                        .expect_status(201)
                        .body;
                    reply = gated["question"]["id"].as_str().unwrap().to_string();
                }
                "person-approved" => {
                    let question = task(&coord, &arg).await;
                    assert_eq!(question["status"], "completed", "{question}");
                    assert_eq!(question["result"]["decision"], "approve", "{question}");
                    assert_eq!(question["result"]["answeredBy"], "dana", "{question}");
                    assert_eq!(question["result"]["answeredAs"], "lead", "{question}");
                    assert!(
                        ready(&coord).await.contains(&"TEST-005".to_string()),
                        "released"
                    );
                }
                "gate-for-observer" => {
                    reply = gate(&coord, "TEST-003", "May the buckets go?").await;
                }
                other => panic!("the script asked for an unknown step: {other}"),
            }
            steps.push(word);
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
            "gate",
            "answered",
            "report",
            "asked",
            "released",
            "delivered",
            "gate-approval",
            "rejected",
            "gate-person-only",
            "gate-for-observer",
            "person-approved"
        ],
        "every step ran, in order"
    );
    for scheme in ["light", "dark"] {
        for size in ["desktop", "mobile"] {
            let png = screenshot_dir().join(format!("gates-attention-{scheme}-{size}.png"));
            let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("{}: {e}", png.display()));
            assert!(bytes.starts_with(b"\x89PNG"), "{} is a PNG", png.display());
        }
    }
}
