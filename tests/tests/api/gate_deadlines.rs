//! Nothing waits on a person forever unnoticed: a question's deadline takes its default
//! decision (`answeredBy: deadline`), bad deadlines are refused, `/metrics` counts the open
//! questions per team and the age of the oldest, and the `needs_human` notice names the task,
//! the question, the command that answers it and a link to it. Real API (SQLite, and
//! PostgreSQL with HUDDLE_TEST_BACKEND=postgres).

use huddle_tests::webhook_receiver::Receiver;
use huddle_tests::{eventually, TestDaemon, ADMIN};
use serde_json::json;

use super::gate_support::{get, in_secs, task};

#[tokio::test]
async fn a_deadline_takes_its_default_decision_when_no_one_decides() {
    let d = TestDaemon::start_with(|s| {
        s.webhooks.allow_private = true;
        s.webhooks.poll_ms = 20;
        s.webhooks.public_url = "https://huddle.example.com/".into();
    })
    .await;
    let receiver = Receiver::start(&[]).await;
    let c = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    c.post(
        &c.t("/webhooks"),
        json!({"url": receiver.url, "events": ["needs_human"]}),
    )
    .await
    .expect_status(201);
    task(&c, "TEST-001").await;
    task(&c, "TEST-002").await;
    // Rejected by default (no decision given); approved by default.
    let q1 = c
        .post(
            &c.t("/tasks/TEST-001/gate"),
            json!({"question": "May it ship?", "kind": "approval", "deadline": in_secs(2)}),
        )
        .await
        .expect_status(201)
        .body["question"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let q2 = c
        .post(
            &c.t("/tasks/TEST-002/gate"),
            json!({"question": "Which db?", "deadline": in_secs(2), "onDeadline": "approve"}),
        )
        .await
        .expect_status(201)
        .body["question"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let open = get(&c, "TEST-001").await;
    assert_eq!(open["gates"][0]["onDeadline"], "reject", "{open}");
    assert!(open["gates"][0]["deadline"].is_string(), "{open}");
    assert!(tester.claim(json!({})).await.is_none(), "both held");

    eventually(30, "both deadlines taken", || async {
        get(&c, &q1).await["status"] == "completed" && get(&c, &q2).await["status"] == "completed"
    })
    .await;
    let rejected = get(&c, &q1).await;
    assert_eq!(rejected["result"]["decision"], "reject", "{rejected}");
    assert_eq!(rejected["result"]["answeredBy"], "deadline");
    assert_eq!(rejected["result"]["answeredAs"], "deadline");
    let cancelled = get(&c, "TEST-001").await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert!(
        cancelled["failureReason"]
            .as_str()
            .unwrap()
            .starts_with("no decision by the deadline"),
        "{cancelled}"
    );
    let told = c
        .get(&c.t("/messages?type=gate_rejected"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(told["messages"][0]["from"], "deadline", "{told}");
    assert_eq!(told["messages"][0]["data"]["task"], "TEST-001", "{told}");
    let claimed = tester.claim(json!({})).await.expect("approved by default");
    assert_eq!(claimed["id"], "TEST-002");
    assert_eq!(claimed["gates"][0]["decision"], "approve", "{claimed}");

    // Each question was told with its task, the command that answers it and a link.
    eventually(30, "two needs_human notices", || async {
        receiver.received().len() >= 2
    })
    .await;
    let first = receiver
        .received()
        .into_iter()
        .find(|r| r.body["huddle"]["taskId"] == q1.as_str())
        .expect("a notice for the first question");
    let text = first.body["text"].as_str().unwrap();
    assert!(
        text.contains(&format!("{q1} holds TEST-001 until approved or rejected"))
            && text.contains(&format!("huddle answer {q1} --approve")),
        "{text}"
    );
    assert_eq!(
        first.body["huddle"]["link"],
        format!("https://huddle.example.com/#/tasks/{q1}")
    );
}

#[tokio::test]
async fn bad_deadlines_are_refused_and_name_the_field() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    task(&c, "TEST-001").await;
    for (body, field) in [
        (json!({"question": "q", "deadline": "tomorrow"}), "deadline"),
        (
            json!({"question": "q", "deadline": in_secs(-5)}),
            "deadline",
        ),
        (
            json!({"question": "q", "deadline": in_secs(400 * 86_400)}),
            "deadline",
        ),
        (
            json!({"question": "q", "onDeadline": "approve"}),
            "onDeadline",
        ),
        (
            json!({"question": "q", "personOnly": true, "deadline": in_secs(60), "onDeadline": "approve"}),
            "onDeadline",
        ),
    ] {
        let refused = c
            .post(&c.t("/tasks/TEST-001/gate"), body.clone())
            .await
            .expect_error(400, "invalid_field");
        assert_eq!(refused.body["error"]["details"]["field"], field, "{body}");
    }
    assert_eq!(
        get(&c, "TEST-001").await["blockedBy"],
        json!([]),
        "nothing asked"
    );
    // A person-only gate may still be rejected by its deadline.
    c.post(
        &c.t("/tasks/TEST-001/gate"),
        json!({"question": "q", "personOnly": true, "deadline": in_secs(3600)}),
    )
    .await
    .expect_status(201);
}

/// `huddle_open_questions` and `huddle_oldest_open_question_seconds` for team `team`.
async fn question_gauges(d: &TestDaemon, team: &str) -> (f64, f64) {
    let text = reqwest::Client::new()
        .get(format!("{}/metrics", d.url))
        .bearer_auth(ADMIN)
        .send()
        .await
        .expect("scrape")
        .text()
        .await
        .expect("body");
    let value = |metric: &str| {
        let prefix = format!("{metric}{{team=\"{team}\"}} ");
        text.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no {prefix} in\n{text}"))
            .parse::<f64>()
            .unwrap()
    };
    (
        value("huddle_open_questions"),
        value("huddle_oldest_open_question_seconds"),
    )
}

/// The gauges come from the deadline sweep's last look (once a second): wait for `open`
/// questions, and return the oldest one's age then.
async fn gauges_become(d: &TestDaemon, team: &str, open: f64) -> f64 {
    eventually(
        30,
        &format!("{open} open questions for {team} in /metrics"),
        || async { question_gauges(d, team).await.0 == open },
    )
    .await;
    question_gauges(d, team).await.1
}

#[tokio::test]
async fn metrics_count_open_questions_per_team_and_the_oldest_ones_age() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    d.team("other").await;
    task(&c, "TEST-001").await;
    task(&c, "TEST-002").await;
    assert_eq!(
        gauges_become(&d, "qa", 0.0).await,
        0.0,
        "no question, no age"
    );
    let mut asked = Vec::new();
    for id in ["TEST-001", "TEST-002"] {
        let q = c
            .post(
                &c.t(&format!("/tasks/{id}/gate")),
                json!({"question": "ok?"}),
            )
            .await
            .expect_status(201)
            .body["question"]["id"]
            .as_str()
            .unwrap()
            .to_string();
        asked.push(q);
    }
    let age = gauges_become(&d, "qa", 2.0).await;
    assert!(age >= 0.0, "{age}");
    assert_eq!(question_gauges(&d, "other").await, (0.0, 0.0));
    c.post(
        &c.t(&format!("/tasks/{}/answer", asked[0])),
        json!({"answer": "yes"}),
    )
    .await
    .expect_status(200);
    gauges_become(&d, "qa", 1.0).await;
}
