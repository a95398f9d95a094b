//! A coordinator acts from the dashboard (`tests/dashboard-e2e/actions.mjs`): answers a
//! `fix_required`, reopens, reassigns, edits, cancels, posts. After each action the script asks
//! this side to check it through the API: the task as stored, and the message with its sender
//! (set by the daemon from the token), so the log says who did it.

use super::browser::{require_browser, seed};
use super::script::Script;
use huddle_tests::{Api, TestDaemon};
use serde_json::Value;
use std::time::Duration;

const TEAM: &str = "qa";

/// The newest messages matching `query` (the search API's filters), newest first.
async fn newest(api: &Api, query: &str) -> Vec<Value> {
    let page = api
        .get(&api.t(&format!("/messages/search?{query}&limit=10")))
        .await
        .expect_status(200)
        .body;
    page["messages"].as_array().expect("messages").clone()
}

async fn task(api: &Api, id: &str) -> Value {
    api.get(&api.t(&format!("/tasks/{id}")))
        .await
        .expect_status(200)
        .body
}

/// The newest `task_action` names the task, the action and the coordinator as its sender.
/// The page posts it after the change itself, so the change can show first: wait for it.
async fn logged(api: &Api, task_id: &str, action: &str) {
    let names_it = |m: &Value| m["data"]["taskId"] == task_id && m["data"]["action"] == action;
    huddle_tests::eventually(
        30,
        &format!("a task_action {action} on {task_id}"),
        || async {
            let log = newest(api, "type=task_action").await;
            log.first().is_some_and(names_it)
        },
    )
    .await;
    let log = newest(api, "type=task_action").await;
    let last = log.first().expect("a task_action message");
    assert_eq!(last["from"], "coordinator", "{last}");
    assert_eq!(last["data"]["taskId"], task_id, "{last}");
    assert_eq!(last["data"]["action"], action, "{last}");
}

#[tokio::test]
async fn a_coordinator_acts_on_tasks_from_the_dashboard() {
    require_browser();
    let d = TestDaemon::start().await;
    let coord = d.team(TEAM).await;
    let tester = d.agent(TEAM, "tester", "tester").await;
    d.agent(TEAM, "executor-1", "executor").await;
    seed(&coord, &tester).await;

    let mut script = Script::start("actions.mjs", &d.url, TEAM, &coord.token, &[]);
    let mut steps = Vec::new();
    let run = async {
        while let Some(step) = script.next_step().await {
            let word = step.split(' ').next().unwrap_or_default().to_string();
            match word.as_str() {
                "answered" => {
                    let seq: i64 = step[word.len()..].trim().parse().expect("the fix's seq");
                    let answer = newest(&tester, "type=fix_answer").await;
                    let answer = answer.first().expect("an answer");
                    assert_eq!(answer["from"], "coordinator");
                    assert_eq!(answer["to"], "tester", "to the fix_required's sender");
                    assert_eq!(answer["data"]["taskId"], "TEST-003");
                    assert_eq!(answer["data"]["replyTo"], seq);
                    assert!(answer["summary"].as_str().unwrap().contains("sandbox-2"));
                }
                "reopened" => {
                    assert_eq!(task(&coord, "TEST-003").await["status"], "pending");
                    logged(&coord, "TEST-003", "reopen").await;
                }
                "reassigned" => {
                    assert_eq!(task(&coord, "TEST-006").await["owner"], "executor-1");
                    logged(&coord, "TEST-006", "reassign").await;
                }
                "edited" => {
                    let t = task(&coord, "TEST-006").await;
                    assert_eq!(t["subject"], "Lint the fixtures (eslint 9)");
                    assert!(t["description"].as_str().unwrap().contains("<img src=x"));
                    logged(&coord, "TEST-006", "edit").await;
                }
                "cancelled" => {
                    assert_eq!(task(&coord, "TEST-006").await["status"], "cancelled");
                    logged(&coord, "TEST-006", "cancel").await;
                }
                "posted" => {
                    let note = newest(&tester, "type=note&to=tester").await;
                    let note = note.first().expect("the note");
                    assert_eq!(note["from"], "coordinator");
                    assert_eq!(note["data"]["taskId"], "TEST-006");
                    assert!(note["summary"].as_str().unwrap().contains("lint config"));
                }
                other => panic!("the script asked for an unknown step: {other}"),
            }
            steps.push(word);
            script.reply(&step, "").await;
        }
    };
    tokio::time::timeout(Duration::from_secs(240), run)
        .await
        .expect("the browser script finished within 4 minutes");
    script.finish().await;
    assert_eq!(
        steps,
        [
            "answered",
            "reopened",
            "reassigned",
            "edited",
            "cancelled",
            "posted"
        ],
        "every action was checked, in order"
    );
}

/// One open stream per token: the page's second stream is refused (429) and it says so.
#[tokio::test]
async fn the_page_says_when_the_stream_limit_refuses_it() {
    require_browser();
    let d = TestDaemon::start_with(|s| s.limits.max_streams_per_token = 1).await;
    let coord = d.team(TEAM).await;
    let mut script = Script::start("limited.mjs", &d.url, TEAM, &coord.token, &[]);
    let run = async {
        if let Some(step) = script.next_step().await {
            panic!("the script asked for a step it should not: {step}");
        }
    };
    tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the browser script finished within 2 minutes");
    script.finish().await;
}
