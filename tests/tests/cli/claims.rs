//! `huddle task claim|heartbeat|release`, `huddle events tail` and `huddle status`: a worker's
//! moves and the team overview from a terminal, as real processes.

use huddle_tests::cli::Huddle;
use huddle_tests::TestDaemon;

#[tokio::test]
async fn a_tester_claims_extends_and_releases_a_task_from_the_command_line() {
    let d = TestDaemon::start().await;
    let coord = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    let as_coord = Huddle::new(&d.url, &coord.token, "qa");
    let as_tester = Huddle::new(&d.url, &tester.token, "qa");
    as_coord
        .ok(&["task", "add", "TEST-001", "unit tests"])
        .await;
    as_coord
        .ok(&[
            "task",
            "add",
            "TEST-002",
            "e2e",
            "--blocked-by",
            " TEST-001 , ",
        ])
        .await;
    as_coord.ok(&["task", "add", "QARUN-001", "qa run"]).await;

    // Only TEST-001 is ready for a tester: QARUN is another role's prefix, TEST-002 is blocked.
    let claimed = as_tester
        .json(&["task", "claim", "--lease", "10s", "--wait", "100ms"])
        .await;
    assert_eq!(claimed["id"], "TEST-001");
    assert_eq!(claimed["status"], "in_progress");
    assert_eq!(claimed["claimedBy"], "tester-1");
    let none = as_tester.json(&["task", "claim"]).await;
    assert!(none.is_null(), "nothing else is ready: {none}");
    let human = as_tester.ok(&["task", "claim"]).await;
    assert!(human.contains("no task is ready"), "{human}");

    let before = claimed["leaseExpiresAt"].as_str().unwrap().to_string();
    let extended = as_tester
        .json(&["task", "heartbeat", "TEST-001", "--lease", "10m"])
        .await;
    assert!(
        extended["leaseExpiresAt"].as_str().unwrap() > before.as_str(),
        "the lease moved on: {before} → {}",
        extended["leaseExpiresAt"]
    );

    let released = as_tester.json(&["task", "release", "TEST-001"]).await;
    assert_eq!(released["status"], "pending");
    assert!(released["claimedBy"].is_null());
    assert_eq!(released["attempts"], 0, "a release is not a failed attempt");

    // The blocked-by list was trimmed: TEST-002 depends on TEST-001 exactly.
    let e2e = as_coord.json(&["task", "show", "TEST-002"]).await;
    assert_eq!(e2e["task"]["blockedBy"], serde_json::json!(["TEST-001"]));

    // Another agent cannot heartbeat a task it does not hold.
    as_tester.ok(&["task", "claim", "--prefix", "TEST"]).await;
    let other = d.agent("qa", "tester-2", "tester").await;
    let (code, err) = Huddle::new(&d.url, &other.token, "qa")
        .fails(&["task", "heartbeat", "TEST-001"])
        .await;
    assert_eq!(code, 1);
    assert!(err.contains("TEST-001"), "{err}");
}

#[tokio::test]
async fn events_tail_follows_task_changes_as_they_happen() {
    let d = TestDaemon::start().await;
    let coord = d.team("qa").await;
    let h = Huddle::new(&d.url, &coord.token, "qa");
    h.ok(&["task", "add", "TEST-001", "unit tests"]).await;
    let mut tail = h.spawn(&["events", "tail", "--type", "task."]);
    let created = tail.stdout.wait_for("task.created").await;
    assert!(
        created.contains("TEST-001 pending: unit tests"),
        "{created}"
    );

    h.ok(&["task", "done", "TEST-001"]).await;
    let completed = tail.stdout.wait_for("task.completed").await;
    assert!(completed.contains("TEST-001 completed"), "{completed}");

    let mut json_tail = h.spawn(&["--json", "events", "tail", "--type", "task.completed"]);
    let event = json_tail.stdout.next_json().await;
    assert_eq!(event["type"], "task.completed");
    assert_eq!(event["data"]["id"], "TEST-001");
}

#[tokio::test]
async fn status_shows_counts_holders_agents_and_the_latest_messages() {
    let d = TestDaemon::start().await;
    let coord = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    let as_coord = Huddle::new(&d.url, &coord.token, "qa");
    let as_tester = Huddle::new(&d.url, &tester.token, "qa");
    for (id, blocked) in [("TEST-001", ""), ("TEST-002", "TEST-001"), ("TEST-003", "")] {
        let mut args = vec!["task", "add", id, "work"];
        if !blocked.is_empty() {
            args.extend(["--blocked-by", blocked]);
        }
        as_coord.ok(&args).await;
    }
    as_tester.ok(&["task", "claim", "--lease", "5m"]).await;
    for n in 1..=7 {
        let summary = format!("note {n}");
        as_coord
            .ok(&["msg", "post", "--type", "note", summary.as_str()])
            .await;
    }

    let status = as_coord.json(&["status", "--messages", "3"]).await;
    assert_eq!(status["team"], "qa");
    assert_eq!(status["tasks"]["in_progress"], 1);
    assert_eq!(status["tasks"]["pending"], 2);
    assert_eq!(
        status["tasks"]["ready"], 1,
        "TEST-003 is ready, TEST-002 waits"
    );
    assert_eq!(status["held"][0]["id"], "TEST-001");
    assert_eq!(status["held"][0]["claimedBy"], "tester-1");
    let left = status["held"][0]["leaseLeftMs"].as_i64().unwrap();
    assert!(left > 0 && left <= 300_000, "{left}");
    let summaries: Vec<&str> = status["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["summary"].as_str().unwrap())
        .collect();
    assert_eq!(summaries, ["note 5", "note 6", "note 7"]);
    let names: Vec<&str> = status["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"tester-1") && names.contains(&"coordinator"));

    let human = as_coord.ok(&["status"]).await;
    assert!(human.contains("team qa · 3 tasks"), "{human}");
    assert!(
        human.contains("HELD BY") && human.contains("tester-1"),
        "{human}"
    );
    assert!(human.contains("note 7"), "{human}");
}
