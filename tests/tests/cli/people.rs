//! `huddle webhook add|ls|deliveries|rm`, `huddle gate` and `huddle answer` against a real daemon
//! (and a real receiver).

use huddle_tests::cli::Huddle;
use huddle_tests::webhook_receiver::Receiver;
use huddle_tests::{eventually, TestDaemon};
use serde_json::json;

#[tokio::test]
async fn a_coordinator_registers_a_webhook_sees_its_deliveries_and_deletes_it() {
    let d = TestDaemon::start_with(|s| {
        s.webhooks.allow_private = true;
        s.webhooks.poll_ms = 20;
    })
    .await;
    let receiver = Receiver::start(&[]).await;
    let coord_api = d.team("qa").await;
    let coord = Huddle::new(&d.url, &coord_api.token, "qa");
    let secret = coord
        .ok(&[
            "webhook",
            "add",
            &receiver.url,
            "--on",
            "fix_required,gate_missed",
        ])
        .await;
    assert!(secret.trim().starts_with("whsec_"), "{secret}");
    let listed = coord.json(&["webhook", "ls"]).await;
    assert_eq!(
        listed["webhooks"][0]["events"],
        json!(["fix_required", "gate_missed"])
    );
    assert!(listed["webhooks"][0].get("secret").is_none());
    let id = listed["webhooks"][0]["id"].as_i64().unwrap().to_string();
    coord
        .ok(&[
            "msg",
            "post",
            "--to",
            "*",
            "--type",
            "fix_required",
            "TEST-001 needs a person",
        ])
        .await;
    eventually(60, "the notice is delivered", || async {
        receiver.received().len() == 1
    })
    .await;
    let log = coord
        .json(&["webhook", "deliveries", "--webhook", &id])
        .await;
    assert_eq!(log["deliveries"][0]["status"], "delivered");
    let table = coord.ok(&["webhook", "deliveries"]).await;
    assert!(
        table.contains("fix_required") && table.contains("delivered"),
        "{table}"
    );
    coord.ok(&["webhook", "rm", &id]).await;
    let (code, err) = coord.fails(&["webhook", "rm", &id]).await;
    assert_ne!(code, 0);
    assert!(err.contains("webhook"), "{err}");
    let (code, err) = coord
        .fails(&["webhook", "add", &receiver.url, "--on", "everything"])
        .await;
    assert_ne!(code, 0);
    assert!(err.contains("unknown webhook trigger"), "{err}");
}

#[tokio::test]
async fn a_coordinator_gates_a_task_and_answers_its_question() {
    let d = TestDaemon::start().await;
    let coord_api = d.team("qa").await;
    let coord = Huddle::new(&d.url, &coord_api.token, "qa");
    coord
        .ok(&["task", "add", "TEST-001", "migrate the schema"])
        .await;
    let said = coord
        .ok(&["gate", "TEST-001", "May the tester drop the old table?"])
        .await;
    assert!(said.contains("TEST-001 waits for HUMAN-001"), "{said}");
    let open = coord
        .json(&["task", "ls", "--owner", "human", "--status", "pending"])
        .await;
    assert_eq!(
        open["tasks"][0]["subject"],
        "May the tester drop the old table?"
    );
    let said = coord
        .ok(&["answer", "HUMAN-001", "yes, after the backup"])
        .await;
    assert!(
        said.contains("answered HUMAN-001; TEST-001 may be claimed now"),
        "{said}"
    );
    let q = coord.json(&["task", "show", "HUMAN-001"]).await;
    assert_eq!(q["task"]["result"]["answer"], "yes, after the backup");
    let (code, err) = coord.fails(&["answer", "TEST-001", "no"]).await;
    assert_ne!(code, 0);
    assert!(err.contains("not a question for a person"), "{err}");
}

#[tokio::test]
async fn a_coordinator_rejects_or_approves_from_the_command_line() {
    let d = TestDaemon::start().await;
    let coord_api = d.team("qa").await;
    let coord = Huddle::new(&d.url, &coord_api.token, "qa");
    coord
        .ok(&["task", "add", "TEST-001", "change calc.py"])
        .await;
    let said = coord
        .ok(&[
            "gate",
            "TEST-001",
            "May the tester change calc.py?",
            "--approval",
        ])
        .await;
    assert!(
        said.contains("huddle answer HUMAN-001 --approve or --reject"),
        "{said}"
    );
    let (code, err) = coord.fails(&["answer", "HUMAN-001", "no"]).await;
    assert_ne!(code, 0);
    assert!(err.contains("decision"), "{err}");
    let said = coord
        .ok(&[
            "answer",
            "HUMAN-001",
            "--reject",
            "billing freezes this week",
        ])
        .await;
    assert!(
        said.contains("rejected HUMAN-001; TEST-001 is cancelled"),
        "{said}"
    );
    let t = coord.json(&["task", "show", "TEST-001"]).await;
    assert_eq!(t["task"]["status"], "cancelled", "{t}");
    assert_eq!(t["task"]["failureReason"], "billing freezes this week");

    // Created gated in one step, then approved.
    coord
        .ok(&[
            "task",
            "add",
            "TEST-002",
            "x",
            "--gate",
            "Ship it?",
            "--approval",
        ])
        .await;
    let t = coord.json(&["task", "show", "TEST-002"]).await;
    assert_eq!(t["task"]["blockedBy"], json!(["HUMAN-002"]), "{t}");
    let said = coord.ok(&["answer", "HUMAN-002", "--approve"]).await;
    assert!(said.contains("approved HUMAN-002"), "{said}");
    let q = coord.json(&["task", "show", "HUMAN-002"]).await;
    assert_eq!(q["task"]["result"]["decision"], "approve", "{q}");
}

#[tokio::test]
async fn a_person_only_gate_with_a_deadline_is_decided_by_a_lead() {
    let d = TestDaemon::start().await;
    let coord_api = d.team("qa").await;
    let coord = Huddle::new(&d.url, &coord_api.token, "qa");
    let admin = Huddle::new(&d.url, huddle_tests::ADMIN, "qa");
    let lead_token = admin.ok(&["agent", "add", "dana", "--role", "lead"]).await;
    let lead = Huddle::new(&d.url, lead_token.trim(), "qa");
    // A coordinator may not mint a lead.
    let (code, err) = coord
        .fails(&["agent", "add", "me-too", "--role", "lead"])
        .await;
    assert_ne!(code, 0);
    assert!(err.contains("only the admin token or a lead"), "{err}");

    coord
        .ok(&["task", "add", "TEST-001", "drop the index"])
        .await;
    let said = coord
        .ok(&[
            "gate",
            "TEST-001",
            "May the index go?",
            "--approval",
            "--person-only",
            "--deadline",
            "2h",
        ])
        .await;
    assert!(
        said.contains("(a lead decides)") && said.contains("reject by default"),
        "{said}"
    );
    let q = coord.json(&["task", "show", "HUMAN-001"]).await;
    let gate = &q["task"]["metadata"]["gate"];
    assert_eq!(gate["personOnly"], true, "{q}");
    assert_eq!(gate["onDeadline"], "reject", "{q}");
    let deadline = chrono::DateTime::parse_from_rfc3339(gate["deadline"].as_str().unwrap())
        .expect("an RFC 3339 deadline");
    let ahead = deadline.signed_duration_since(chrono::Utc::now());
    assert!(
        ahead > chrono::Duration::minutes(110) && ahead <= chrono::Duration::minutes(120),
        "two hours ahead: {ahead}"
    );

    let (code, err) = coord.fails(&["answer", "HUMAN-001", "--approve"]).await;
    assert_ne!(code, 0);
    assert!(
        err.contains("person_required") || err.contains("for a person to decide"),
        "{err}"
    );
    let said = lead
        .ok(&["answer", "HUMAN-001", "--approve", "after the freeze"])
        .await;
    assert!(said.contains("approved HUMAN-001"), "{said}");

    // A bad --deadline is named before anything is sent.
    let (code, err) = coord
        .fails(&["gate", "TEST-001", "again?", "--deadline", "soonish"])
        .await;
    assert_ne!(code, 0);
    assert!(err.contains("--deadline"), "{err}");
}
