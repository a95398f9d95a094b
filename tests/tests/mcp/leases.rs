//! Leases and abandoned waits as real agents meet them (`leases.py`: the official Python SDK and
//! raw JSON-RPC and REST clients): a heartbeating agent keeps its task across a long turn; 100
//! claims and 10 inbox reads abandoned by cancel, disconnect and timeout claim nothing and use no
//! attempt; claimers that leave while tasks arrive never cost an attempt.

use huddle_tests::{python, TestDaemon, ADMIN};
use serde_json::Value;
use std::path::Path;

#[tokio::test]
async fn agents_keep_what_they_heartbeat_and_abandoned_waits_claim_nothing() {
    python::require_modules(&["mcp", "httpx2"]);
    let d = TestDaemon::start().await;
    let coordinator = d.team("qa").await;
    let mut testers = Vec::new();
    for i in 1..=5 {
        testers.push(d.agent("qa", &format!("tester-{i}"), "tester").await);
    }
    let tokens: Vec<&str> = testers.iter().map(|t| t.token.as_str()).collect();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/leases.py");
    let output = python::run(
        &script,
        &[
            ("HUDDLE_URL", &d.url),
            ("HUDDLE_TEAM", "qa"),
            ("HUDDLE_ADMIN", ADMIN),
            ("HUDDLE_COORDINATOR", &coordinator.token),
            ("HUDDLE_TESTERS", &tokens.join(",")),
            // A lease long enough that a loaded CI machine's stall of several seconds between
            // two heartbeats does not lapse it (3 s did, at a load average of 15 on 2 cores).
            ("HUDDLE_TURN_LEASE_MS", "8000"),
            ("HUDDLE_TURN_LEASES", "2"),
        ],
    )
    .await;
    let report: Value = serde_json::from_slice(&output.stdout).expect("the script's JSON report");

    // A claim over MCP says what its lease is and how to keep it.
    let answer = &report["claim_answer"];
    assert_eq!(answer["lease"]["leaseMs"], 8000, "{answer}");
    assert_eq!(
        answer["lease"]["expiresAt"],
        answer["tasks"][0]["leaseExpiresAt"]
    );
    let renew = answer["lease"]["renew"].as_str().unwrap();
    assert!(renew.contains("task_heartbeat"), "{renew}");

    // Two lease lengths of heartbeats: the task stayed with its holder, the rival got nothing.
    assert!(report["turn_seconds"].as_f64().unwrap() >= 16.0, "{report}");
    // Outlasting two leases takes at least two beats; a quiet machine makes about ten.
    assert!(report["turn_beats"].as_u64().unwrap() >= 3, "{report}");
    assert_eq!(report["beats_move_the_expiry"], true);
    assert_eq!(report["rival_got"], serde_json::json!([]));
    let done = &report["turn_completed"];
    assert_eq!(
        (done["status"].as_str(), done["attempts"].as_i64()),
        (Some("completed"), Some(0))
    );

    // Without heartbeats: the lease lapsed, the rival took the task, the late completion failed.
    assert_eq!(report["lapsed_taken_by_rival"], true);
    assert_eq!(report["lapsed_attempts"], 1);
    assert_eq!(report["late_complete"]["code"], "not_holder");
    let notes = coordinator
        .get(&coordinator.t("/messages?type=task_released"))
        .await;
    let notes = notes.expect_status(200).body;
    let note = &notes["messages"][0];
    assert_eq!(note["to"], "coordinator", "{notes}");
    assert_eq!(note["data"]["note"], "not mine after all");
    assert_eq!(note["data"]["task"], "TURN-002");

    // 100 abandoned claims (20 each: cancelled, disconnected, timed out, SDK timeout, REST
    // disconnect) and 10 inbox reads: the cancelled ones answered at once, empty; nothing was
    // claimed for anyone when tasks arrived later, and no attempt was used.
    let cancelled = report["cancelled_answers"].as_array().unwrap();
    assert_eq!(cancelled.len(), 20);
    assert!(
        cancelled.iter().all(|a| a == &serde_json::json!([])),
        "{cancelled:?}"
    );
    assert_eq!(report["timeouts_raised"], 40);
    let ghosts = report["ghost_tasks"].as_array().unwrap();
    assert_eq!(ghosts.len(), 20);
    for t in ghosts {
        assert_eq!(
            (
                t["status"].as_str(),
                t["attempts"].as_i64(),
                &t["claimedBy"]
            ),
            (Some("pending"), Some(0), &Value::Null),
            "{t}"
        );
    }

    // Claimers that left while tasks arrived: no attempt used, nothing failed, and every task
    // a client received is held by that client.
    let race = report["race_tasks"].as_array().unwrap();
    assert_eq!(race.len(), 30);
    let received = report["race_received"].as_object().unwrap();
    for t in race {
        assert_eq!(t["attempts"], 0, "{t}");
        let status = t["status"].as_str().unwrap();
        assert!(status == "pending" || status == "in_progress", "{t}");
        if let Some(holder) = received.get(t["id"].as_str().unwrap()) {
            assert_eq!((status, &t["claimedBy"]), ("in_progress", holder), "{t}");
        }
    }

    // Presence: every tester that made a request was seen.
    let agents = coordinator
        .get(&coordinator.t("/agents"))
        .await
        .expect_status(200)
        .body;
    for a in agents["agents"].as_array().unwrap() {
        assert!(a["lastSeenAt"].is_string(), "{a}");
    }
}
