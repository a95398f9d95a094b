//! Two people edit one task in two tabs (`tests/dashboard-e2e/conflict.mjs`): the second Save
//! meets the first one's change, the page shows the conflict instead of overwriting it, and
//! after each step this side reads the task through the API — nothing either of them did is
//! lost, and the log's `task_action` names only the fields the person changed.

use super::browser::require_browser;
use super::script::Script;
use huddle_tests::{eventually, Api, TestDaemon};
use serde_json::{json, Value};
use std::time::Duration;

const TEAM: &str = "qa";
const ID: &str = "TEST-001";

async fn task(api: &Api) -> Value {
    api.get(&api.t(&format!("/tasks/{ID}")))
        .await
        .expect_status(200)
        .body
}

/// Waits until the newest `task_action` sent by `agent` names exactly `changes`.
async fn logged(api: &Api, agent: &str, changes: Value) {
    let found = || async {
        let page = api
            .get(&api.t(&format!(
                "/messages/search?type=task_action&from={agent}&limit=1"
            )))
            .await
            .expect_status(200)
            .body;
        page["messages"][0]["data"]["changes"].clone()
    };
    eventually(30, &format!("{agent}'s task_action"), || async {
        found().await == changes
    })
    .await;
}

#[tokio::test]
async fn two_people_editing_one_task_lose_nothing() {
    require_browser();
    let d = TestDaemon::start().await;
    let coord = d.team(TEAM).await;
    let alex = d.agent(TEAM, "alex", "lead").await;
    let dana = d.agent(TEAM, "dana", "lead").await;
    coord
        .post(
            &coord.t("/tasks"),
            json!({"id": ID, "subject": "Unit tests for auth", "description": "Run the auth suite.",
                   "owner": "tester"}),
        )
        .await
        .expect_status(201);

    let extra = [("HUDDLE_LEAD_TOKEN", dana.token.clone())];
    let mut script = Script::start("conflict.mjs", &d.url, TEAM, &alex.token, &extra);
    let mut steps = Vec::new();
    let mut alex_version = Value::Null;
    let run = async {
        while let Some(step) = script.next_step().await {
            let mut words = step.split(' ');
            let word = words.next().unwrap_or_default().to_string();
            let t = task(&coord).await;
            match word.as_str() {
                "alex-saved" => {
                    let started: i64 = words.next().unwrap().parse().unwrap();
                    assert_eq!(t["version"], started + 1, "{t}");
                    assert_eq!(t["description"], "Run the auth suite against staging.");
                    assert_eq!(t["subject"], "Unit tests for auth", "{t}");
                    logged(
                        &coord,
                        "alex",
                        json!({"description": "Run the auth suite against staging."}),
                    )
                    .await;
                }
                "conflict-shown" => {
                    // Dana's Save was refused: Alex's change stands, none of Dana's is in.
                    assert_eq!(t["subject"], "Unit tests for auth", "{t}");
                    assert_eq!(t["description"], "Run the auth suite against staging.");
                    assert_eq!(t["owner"], "tester", "{t}");
                }
                "dana-saved" => {
                    assert_eq!(t["subject"], "Unit tests for auth and sessions", "{t}");
                    assert_eq!(
                        t["description"], "Run the auth suite against staging.",
                        "Alex's description survives Dana's save"
                    );
                    assert_eq!(t["owner"], "tester", "{t}");
                    logged(
                        &coord,
                        "dana",
                        json!({"subject": "Unit tests for auth and sessions"}),
                    )
                    .await;
                }
                "alex-saved-again" => {
                    assert_eq!(t["description"], "Alex: run it on staging and prod.");
                    assert_eq!(t["subject"], "Unit tests for auth and sessions", "{t}");
                    alex_version = t["version"].clone();
                }
                "dana-discarded" => {
                    assert_eq!(t["description"], "Alex: run it on staging and prod.");
                    assert_eq!(t["subject"], "Unit tests for auth and sessions", "{t}");
                    assert_eq!(t["version"], alex_version, "discarding changed nothing");
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
            "alex-saved",
            "conflict-shown",
            "dana-saved",
            "alex-saved-again",
            "dana-discarded"
        ],
        "every step ran, in order"
    );
}
