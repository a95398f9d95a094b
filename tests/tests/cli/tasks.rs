//! `huddle task add|ls|show|update|done|fail`, with `--json` output parsed and checked.

use huddle_tests::cli::Huddle;
use huddle_tests::TestDaemon;
use serde_json::{json, Value};

/// The ids of a `task ls --json` answer, sorted.
fn ids(list: &Value) -> Vec<String> {
    let mut ids: Vec<String> = list["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn tasks_are_added_listed_and_shown_with_blockers_and_dependents() {
    let d = TestDaemon::start().await;
    let coord = d.team("qa").await;
    let h = Huddle::new(&d.url, &coord.token, "qa");

    let first = h
        .json(&[
            "task",
            "add",
            "TEST",
            "unit tests",
            "--description",
            "run pytest",
            "--metadata",
            r#"{"layer":"unit"}"#,
        ])
        .await;
    assert_eq!(
        (first["id"].as_str(), first["status"].as_str()),
        (Some("TEST-001"), Some("pending"))
    );
    assert_eq!(
        (
            first["description"].as_str(),
            first["metadata"]["layer"].as_str()
        ),
        (Some("run pytest"), Some("unit"))
    );
    let second = h
        .json(&[
            "task",
            "add",
            "TEST-010",
            "e2e",
            "--blocked-by",
            "TEST-001",
            "--owner",
            "tester",
            "--max-attempts",
            "5",
        ])
        .await;
    assert_eq!(
        (second["id"].as_str(), second["owner"].as_str()),
        (Some("TEST-010"), Some("tester"))
    );
    assert_eq!(
        (second["blockedBy"].clone(), second["maxAttempts"].clone()),
        (json!(["TEST-001"]), json!(5))
    );
    let human = h
        .ok(&[
            "task",
            "add",
            "QARUN",
            "execute",
            "--blocked-by",
            "TEST-001,TEST-010",
        ])
        .await;
    assert!(human.starts_with("created QARUN-001"), "{human}");

    assert_eq!(
        ids(&h.json(&["task", "ls"]).await),
        ["QARUN-001", "TEST-001", "TEST-010"]
    );
    assert_eq!(ids(&h.json(&["task", "ls", "--ready"]).await), ["TEST-001"]);
    assert_eq!(
        ids(&h.json(&["task", "ls", "--prefix", "TEST"]).await),
        ["TEST-001", "TEST-010"]
    );
    assert_eq!(
        ids(&h.json(&["task", "ls", "--owner", "tester"]).await),
        ["TEST-010"]
    );
    assert_eq!(
        ids(&h.json(&["task", "ls", "--status", "completed"]).await),
        Vec::<String>::new()
    );
    assert_eq!(
        h.json(&["task", "ls", "--limit", "2"]).await["tasks"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let table = h.ok(&["task", "ls"]).await;
    assert!(table.lines().next().unwrap().starts_with("ID"), "{table}");
    assert_eq!(table.lines().count(), 4, "a header and three rows: {table}");

    let shown = h.json(&["task", "show", "TEST-010"]).await;
    assert_eq!(shown["task"]["id"], "TEST-010");
    assert_eq!(shown["blockers"][0]["id"], "TEST-001");
    assert_eq!(shown["blockers"][0]["status"], "pending");
    assert_eq!(shown["dependents"][0]["id"], "QARUN-001");
    let text = h.ok(&["task", "show", "TEST-001"]).await;
    assert!(
        text.contains("blocks:") && text.contains("TEST-010  pending  e2e"),
        "{text}"
    );

    let (code, err) = h.fails(&["task", "show", "TEST-404"]).await;
    assert_eq!(code, 1);
    assert!(
        err.contains("TEST-404") && err.contains("not found"),
        "{err}"
    );
    let (_, err) = h
        .fails(&["task", "add", "TEST", "loop", "--blocked-by", "TEST-999"])
        .await;
    assert!(err.contains("TEST-999"), "{err}");
    let (code, err) = h.fails(&["task", "ls", "--status", "sleeping"]).await;
    assert_eq!(code, 2, "{err}");
}

#[tokio::test]
async fn tasks_are_updated_with_if_match_then_completed_or_failed() {
    let d = TestDaemon::start().await;
    let coord = d.team("qa").await;
    let h = Huddle::new(&d.url, &coord.token, "qa");
    h.ok(&["task", "add", "TEST-001", "first"]).await;
    h.ok(&["task", "add", "TEST-002", "second", "--owner", "tester"])
        .await;

    let read = h.json(&["task", "show", "TEST-001"]).await;
    let version = read["task"]["version"].as_i64().unwrap().to_string();
    let updated = h
        .json(&[
            "task",
            "update",
            "TEST-001",
            "--subject",
            "renamed",
            "--active-form",
            "Renaming",
            "--metadata",
            r#"{"k":1}"#,
            "--add-blocked-by",
            "TEST-002",
            "--if-match",
            &version,
        ])
        .await;
    assert_eq!(
        (updated["subject"].as_str(), updated["activeForm"].as_str()),
        (Some("renamed"), Some("Renaming"))
    );
    assert_eq!(
        (
            updated["metadata"]["k"].clone(),
            updated["blockedBy"].clone()
        ),
        (json!(1), json!(["TEST-002"]))
    );
    let (code, err) = h
        .fails(&[
            "task",
            "update",
            "TEST-001",
            "--subject",
            "again",
            "--if-match",
            &version,
        ])
        .await;
    assert_eq!(code, 1);
    assert!(
        err.contains("412") && err.contains("stale_version"),
        "{err}"
    );
    let unblocked = h
        .json(&[
            "task",
            "update",
            "TEST-001",
            "--remove-blocked-by",
            "TEST-002",
        ])
        .await;
    assert_eq!(unblocked["blockedBy"], json!([]));
    let unowned = h
        .json(&["task", "update", "TEST-002", "--clear-owner"])
        .await;
    assert_eq!(unowned["owner"], Value::Null);

    let done = h
        .json(&["task", "done", "TEST-001", "--result", r#"{"passed":12}"#])
        .await;
    assert_eq!(
        (done["status"].as_str(), done["result"]["passed"].as_i64()),
        (Some("completed"), Some(12))
    );
    // A failed attempt requeues the task while it has attempts left; --final fails it for good.
    let retried = h
        .json(&["task", "fail", "TEST-002", "the network dropped"])
        .await;
    assert_eq!(
        (retried["status"].as_str(), retried["attempts"].as_i64()),
        (Some("pending"), Some(1))
    );
    let line = h.ok(&["task", "fail", "TEST-002", "flaky again"]).await;
    assert!(
        line.starts_with("requeued after a failed attempt: TEST-002 (pending"),
        "{line}"
    );
    let failed = h
        .json(&[
            "task",
            "fail",
            "TEST-002",
            "the suite does not build",
            "--final",
        ])
        .await;
    assert_eq!(
        (failed["status"].as_str(), failed["failureReason"].as_str()),
        (Some("failed"), Some("the suite does not build"))
    );
    assert_eq!(failed["attempts"], 3);
    let line = h
        .ok(&["task", "update", "TEST-002", "--status", "pending"])
        .await;
    assert!(line.starts_with("updated TEST-002 (pending"), "{line}");

    let (_, err) = h.fails(&["task", "done", "TEST-001"]).await;
    assert!(err.contains("task_closed"), "{err}");
}
