//! The hook bridge in real Claude Code sessions: a lead's `TaskCreate` lands in huddle, two
//! teammates racing `TaskUpdate(in_progress)` on one task get one claim between them and the
//! other reads who holds it, `SendMessage` reaches the bus, `completed` completes in huddle and
//! the end of a session releases what it held.

use super::session::{call, lead_creates, load_team_tools, settings, Machine};
use huddle_tests::TestDaemon;
use serde_json::{json, Value};

#[tokio::test]
async fn two_teammates_race_one_task_and_the_loser_reads_who_holds_it() {
    let d = TestDaemon::start().await;
    let lead = d.team("qa").await;
    let one = d.agent("qa", "tester-1", "tester").await;
    let two = d.agent("qa", "tester-2", "tester").await;
    let machine = Machine::new(&d.url, "qa");
    lead_creates(&machine, &lead.token, &["TEST-001: run the auth suite"]).await;
    let task = lead
        .get(&lead.t("/tasks/TEST-001"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(task["metadata"]["claudeTaskId"], "1", "{task}");
    assert_eq!(task["subject"], "TEST-001: run the auth suite");
    assert_eq!(task["status"], "pending");

    // Both sessions end with their claims in place (no SessionEnd hook), so the holder stays
    // readable after the race.
    let take = || {
        json!([
            load_team_tools(),
            call(
                "TaskUpdate",
                json!({ "taskId": "1", "status": "in_progress" })
            ),
        ])
    };
    let quiet = settings(false);
    let (first, second) = tokio::join!(
        machine.session("tester-1", &one.token, &quiet, take()),
        machine.session("tester-2", &two.token, &quiet, take()),
    );

    let task = lead
        .get(&lead.t("/tasks/TEST-001"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(task["status"], "in_progress", "{task}");
    let holder = task["claimedBy"].as_str().expect("one holder").to_string();
    let (winner, loser) = match holder.as_str() {
        "tester-1" => (first, second),
        "tester-2" => (second, first),
        other => panic!("held by {other}"),
    };
    let denied = loser.tool_results();
    assert!(
        denied.contains(&format!("{holder} holds it in huddle")),
        "the loser's model reads the holder: {denied}"
    );
    assert!(
        !winner.tool_results().contains("holds it in huddle"),
        "the winner was not refused: {}",
        winner.tool_results()
    );
    assert_eq!(winner.result["is_error"], false);
}

#[tokio::test]
async fn a_teammate_messages_completes_and_its_session_end_releases() {
    let d = TestDaemon::start().await;
    let lead = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    let machine = Machine::new(&d.url, "qa");
    lead_creates(
        &machine,
        &lead.token,
        &[
            "TEST-001: run the auth suite",
            "TEST-002: run the cart suite",
        ],
    )
    .await;
    let before = lead
        .get(&lead.t("/tasks/TEST-002"))
        .await
        .expect_status(200)
        .body;

    let turns = json!([
        load_team_tools(),
        call(
            "TaskUpdate",
            json!({ "taskId": "1", "status": "in_progress" })
        ),
        call(
            "SendMessage",
            json!({
                "to": "coordinator",
                "summary": "auth suite: 12 passed",
                "message": "TEST-001 done, 12 passed",
            })
        ),
        call(
            "TaskUpdate",
            json!({ "taskId": "1", "status": "completed" })
        ),
        call(
            "TaskUpdate",
            json!({ "taskId": "2", "status": "in_progress" })
        ),
    ]);
    let run = machine
        .session("tester-1", &tester.token, &settings(true), turns)
        .await;
    assert!(
        !run.tool_results().contains("huddle"),
        "nothing was refused: {}",
        run.tool_results()
    );

    let done = lead
        .get(&lead.t("/tasks/TEST-001"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["claimedBy"], "tester-1", "{done}");

    let messages = lead.get(&lead.t("/messages")).await.expect_status(200).body;
    let posted: Vec<&Value> = messages["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["summary"] == "auth suite: 12 passed")
        .collect();
    assert_eq!(posted.len(), 1, "{messages}");
    assert_eq!(posted[0]["from"], "tester-1");
    assert_eq!(posted[0]["to"], "coordinator");
    assert_eq!(posted[0]["data"]["message"], "TEST-001 done, 12 passed");

    // TEST-002 was claimed (a new version) and released when the session ended.
    let released = lead
        .get(&lead.t("/tasks/TEST-002"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(released["status"], "pending", "{released}");
    assert!(released["claimedBy"].is_null(), "{released}");
    assert!(
        released["version"].as_i64() > before["version"].as_i64(),
        "claimed then released: {before} → {released}"
    );
    let held = std::fs::read_dir(machine.dir.path().join("state"))
        .unwrap()
        .count();
    assert_eq!(held, 0, "the session's held list is gone");
}
