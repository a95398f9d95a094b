//! `huddle budget set|show` and `huddle spend` against a real daemon, and the budget's
//! `budget_warning` and `budget_exceeded` notices reaching a real webhook receiver.

use huddle_tests::cli::Huddle;
use huddle_tests::webhook_receiver::Receiver;
use huddle_tests::{eventually, TestDaemon};
use serde_json::json;

#[tokio::test]
async fn a_coordinator_sets_a_budget_is_told_as_it_runs_out_and_reads_the_spending() {
    let d = TestDaemon::start_with(|s| {
        s.webhooks.allow_private = true;
        s.webhooks.poll_ms = 20;
    })
    .await;
    let receiver = Receiver::start(&[]).await;
    let coord_api = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    let coord = Huddle::new(&d.url, &coord_api.token, "qa");
    coord
        .ok(&[
            "webhook",
            "add",
            &receiver.url,
            "--on",
            "budget_warning,budget_exceeded",
        ])
        .await;
    let set = coord
        .json(&[
            "budget",
            "set",
            "--max-tokens",
            "100",
            "--warn-percent",
            "50",
            "--price",
            "m1=1000000:2000000",
        ])
        .await;
    assert_eq!(set["version"], 1);
    assert_eq!(
        set["budget"]["prices"]["m1"]["completionPerMillion"],
        2_000_000
    );

    for (prompt, completion) in [(40, 20), (30, 20)] {
        let call = tester
            .post(
                &tester.t("/spend/reserve"),
                json!({"model": "m1", "task": "TEST-001"}),
            )
            .await
            .expect_status(201);
        let id = call.body["id"].as_i64().unwrap();
        tester
            .post(
                &tester.t(&format!("/spend/{id}/settle")),
                json!({"promptTokens": prompt, "completionTokens": completion}),
            )
            .await
            .expect_status(200);
    }
    eventually(60, "both notices delivered", || async {
        receiver.received().len() == 2
    })
    .await;
    let triggers: Vec<_> = receiver
        .received()
        .iter()
        .map(|r| r.body["huddle"]["trigger"].clone())
        .collect();
    assert_eq!(
        triggers,
        [json!("budget_warning"), json!("budget_exceeded")]
    );

    let shown = coord.json(&["budget", "show"]).await;
    assert_eq!(shown["exhausted"], true);
    assert_eq!(shown["spent"]["tokens"], 110);
    let text = coord.ok(&["budget", "show"]).await;
    assert!(text.contains("SPENT"), "{text}");
    let spent = coord.json(&["spend", "--task", "TEST-001"]).await;
    assert_eq!(spent["total"]["calls"], 2);
    assert_eq!(spent["total"]["costMicros"], 70 + 80);
    let table = coord.ok(&["spend"]).await;
    assert!(
        table.contains("tester-1") && table.contains("TEST-001"),
        "{table}"
    );

    // A second `budget set` is sent with the version it read: it raises the budget.
    let raised = coord.json(&["budget", "set", "--max-tokens", "1000"]).await;
    assert_eq!(
        (raised["version"].clone(), raised["exhausted"].clone()),
        (json!(2), json!(false))
    );
    let (code, err) = coord.fails(&["budget", "set", "--period", "week"]).await;
    assert_ne!(code, 0);
    assert!(err.contains("total or day"), "{err}");
}
