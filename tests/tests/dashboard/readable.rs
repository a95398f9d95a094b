//! What makes the page readable (`tests/dashboard-e2e/readable.mjs`): the contrast of every
//! status and pass-rate pill computed from the page's styles in both themes, long names, types,
//! summaries and memory keys wrapping inside their containers on a desktop and a phone, and a
//! log that keeps the row being read in place when messages arrive (fewer than 500 rows). This
//! side seeds the team (`browser::seed` plus long values and enough rows to scroll) and posts
//! the messages the script waits for.

use super::browser::{post, require_browser, seed};
use super::script::Script;
use huddle_tests::TestDaemon;
use serde_json::{json, Value};
use std::time::Duration;

const TEAM: &str = "qa";
/// Notes that make the log long enough to scroll, well under its 500 rows.
const NOTES: usize = 150;

#[tokio::test]
async fn pills_contrast_long_text_wraps_and_the_log_keeps_its_place() {
    require_browser();
    let d = TestDaemon::start().await;
    let coord = d.team(TEAM).await;
    let tester = d.agent(TEAM, "tester", "tester").await;
    let watcher = d.agent(TEAM, "watcher", "observer").await;
    let long_name = format!("reviewer-{}", "x".repeat(54));
    assert_eq!(long_name.len(), 63, "the longest agent name");
    let long = d.agent(TEAM, &long_name, "tester").await;
    let mut messages = seed(&coord, &tester).await;

    // Pass rates below the gate and poor in the log, next to the seed's good ones.
    for (rate, summary) in [(80.0, "checkout: 40/50"), (50.0, "payments: 25/50")] {
        let data = json!({"taskId": "TEST-002", "passRate": rate, "iterations": 1, "total": 50,
                          "passed": (rate / 2.0) as u32, "qualityGatePassed": false});
        post(&tester, &mut messages, "test_result", summary, data).await;
    }
    // The longest name, to itself, with the longest type and a summary without a break.
    let long_type = "z".repeat(64);
    long.post(
        &long.t("/messages"),
        json!({"to": long_name, "type": long_type, "summary": "y".repeat(400)}),
    )
    .await
    .expect_status(201);
    messages += 1;
    let notes: Vec<Value> = (0..NOTES)
        .map(|i| json!({"to": "*", "type": "note", "summary": format!("note {i} to scroll by")}))
        .collect();
    tester
        .post(&tester.t("/messages/batch"), json!({ "messages": notes }))
        .await
        .expect_status(201);
    messages += NOTES;
    coord
        .patch(
            &coord.t("/memory"),
            json!({ "k".repeat(300): "v".repeat(400),
                    format!("nested-{}", "n".repeat(250)): {"inner": 1} }),
        )
        .await
        .expect_status(200);

    let extra = [
        ("HUDDLE_MESSAGES", messages.to_string()),
        ("HUDDLE_LONG_NAME", long_name.clone()),
    ];
    let mut script = Script::start("readable.mjs", &d.url, TEAM, &watcher.token, &extra);
    let mut steps = Vec::new();
    let run = async {
        while let Some(step) = script.next_step().await {
            let count = match step.as_str() {
                "post-message" => 1,
                "post-burst" => 3,
                other => panic!("the script asked for an unknown step: {other}"),
            };
            let summaries: Vec<String> = (0..count)
                .map(|_| format!("live-{}", uuid::Uuid::new_v4().simple()))
                .collect();
            let batch: Vec<Value> = summaries
                .iter()
                .map(|s| json!({"to": "*", "type": "note", "summary": s}))
                .collect();
            tester
                .post(&tester.t("/messages/batch"), json!({ "messages": batch }))
                .await
                .expect_status(201);
            steps.push(step.clone());
            script.reply(&step, &summaries.join(" ")).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(300), run)
        .await
        .expect("the browser script finished within 5 minutes");
    script.finish().await;
    assert_eq!(steps, ["post-message", "post-burst"], "every step ran");
}
