//! `task_gate` and `task_answer` over raw JSON-RPC: a coordinator holds a task for a person and
//! relays the answer, with the same effect as the HTTP routes (no claim until answered, the
//! answer kept on the question); an observer is refused with the API's 403; bad input names
//! the field.

use super::history::{answer, call};
use huddle_tests::TestDaemon;
use serde_json::json;

#[tokio::test]
async fn a_coordinator_gates_a_task_and_relays_the_answer_through_mcp() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    let observer = d.agent("qa", "watcher", "observer").await;
    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-001", "subject": "drop the old table"}),
    )
    .await
    .expect_status(201);

    let raw = call(
        &d,
        &c.token,
        "task_gate",
        json!({"id": "TEST-001", "question": "May the tester drop it?\nIt holds 2 GB."}),
    )
    .await;
    let (gated, error) = answer(&raw);
    assert!(!error, "{gated}");
    let qid = gated["question"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{raw}"))
        .to_string();
    assert!(qid.starts_with("HUMAN-"), "{gated}");
    assert_eq!(gated["question"]["owner"], "human");
    assert_eq!(gated["question"]["subject"], "May the tester drop it?");
    assert_eq!(gated["task"]["blockedBy"], json!([qid.clone()]));
    assert!(tester.claim(json!({})).await.is_none(), "held by the gate");

    // Only roles that edit tasks gate and answer; a tester is refused like over HTTP.
    let refused = call(
        &d,
        &tester.token,
        "task_answer",
        json!({"id": qid, "answer": "yes"}),
    )
    .await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(refused["structuredContent"]["error"]["code"], "forbidden");
    let refused = call(
        &d,
        &observer.token,
        "task_gate",
        json!({"id": "TEST-001", "question": "again?"}),
    )
    .await;
    assert_eq!(
        refused["structuredContent"]["error"]["code"], "forbidden",
        "{refused}"
    );

    // Bad input: an empty answer names the field; the gated task itself is not a question.
    let empty = call(
        &d,
        &c.token,
        "task_answer",
        json!({"id": qid, "answer": "  "}),
    )
    .await;
    assert_eq!(empty["isError"], true, "{empty}");
    assert_eq!(
        empty["structuredContent"]["error"]["details"]["field"], "answer",
        "{empty}"
    );
    let wrong = call(
        &d,
        &c.token,
        "task_answer",
        json!({"id": "TEST-001", "answer": "yes"}),
    )
    .await;
    assert_eq!(
        wrong["structuredContent"]["error"]["code"], "invalid_transition",
        "{wrong}"
    );
    let missing = call(&d, &c.token, "task_gate", json!({"id": "TEST-001"})).await;
    assert_eq!(
        missing["structuredContent"]["error"]["details"]["field"], "question",
        "{missing}"
    );

    let (answered, error) = answer(
        &call(
            &d,
            &c.token,
            "task_answer",
            json!({"id": qid, "answer": "Yes, after the backup."}),
        )
        .await,
    );
    assert!(!error, "{answered}");
    assert_eq!(answered["status"], "completed");
    assert_eq!(
        answered["result"],
        json!({"answer": "Yes, after the backup.", "answeredBy": "coordinator", "answeredAs": "coordinator"})
    );
    let http = c
        .get(&c.t(&format!("/tasks/{qid}")))
        .await
        .expect_status(200)
        .body;
    assert_eq!(http["status"], "completed", "{http}");
    let claimed = tester
        .claim(json!({}))
        .await
        .expect("released by the answer");
    assert_eq!(claimed["id"], "TEST-001");
}

#[tokio::test]
async fn a_rejection_through_mcp_does_what_one_over_rest_does() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    // Created gated in one call, as over REST.
    let (created, error) = answer(
        &call(
            &d,
            &c.token,
            "task_create",
            json!({"tasks": {"id": "TEST-001", "subject": "change calc.py",
                   "gate": {"question": "May the tester change calc.py?", "kind": "approval"}}}),
        )
        .await,
    );
    assert!(!error, "{created}");
    let qid = created["tasks"][0]["blockedBy"][0]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_string();

    // An approval gate wants a decision: refused as over REST, naming the field.
    let words_only = call(
        &d,
        &c.token,
        "task_answer",
        json!({"id": qid, "answer": "No."}),
    )
    .await;
    assert_eq!(words_only["isError"], true, "{words_only}");
    assert_eq!(
        words_only["structuredContent"]["error"]["details"]["field"], "decision",
        "{words_only}"
    );

    let reason = "No, billing freezes this week.";
    let (q, error) = answer(
        &call(
            &d,
            &c.token,
            "task_answer",
            json!({"id": qid, "decision": "reject", "answer": reason}),
        )
        .await,
    );
    assert!(!error, "{q}");
    assert_eq!(q["result"]["decision"], "reject");
    let t = c.get(&c.t("/tasks/TEST-001")).await.expect_status(200).body;
    assert_eq!(t["status"], "cancelled", "{t}");
    assert_eq!(t["failureReason"], reason);
    assert!(tester.claim(json!({})).await.is_none());
    let told = c
        .get(&c.t("/messages?type=gate_rejected"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(told["messages"][0]["data"]["task"], "TEST-001", "{told}");

    // task_get shows the decision, as GET …/tasks/{id} does.
    let (got, error) = answer(&call(&d, &c.token, "task_get", json!({"id": "TEST-001"})).await);
    assert!(!error, "{got}");
    assert_eq!(got["gates"][0]["decision"], "reject", "{got}");
    assert_eq!(got["gates"][0]["answer"], reason);
}

#[tokio::test]
async fn agents_on_the_official_sdk_meet_approval_gates_as_rest_clients_do() {
    huddle_tests::python::require_modules(&["mcp", "httpx2"]);
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/gates.py");
    let output = huddle_tests::python::run(
        &script,
        &[
            ("HUDDLE_URL", &d.url),
            ("HUDDLE_COORDINATOR", &c.token),
            ("HUDDLE_TESTER", &tester.token),
        ],
    )
    .await;
    let report: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("the script's JSON report");

    assert_eq!(
        report["words_only"]["details"]["field"], "decision",
        "{report}"
    );
    assert_eq!(report["rejected"]["result"]["decision"], "reject");
    let rejected = &report["rejected_task"];
    assert_eq!(rejected["status"], "cancelled", "{rejected}");
    assert_eq!(rejected["failureReason"], "Billing freezes this week.");
    assert_eq!(rejected["gates"][0]["decision"], "reject");
    // Only the approved task was claimable, and its claim says what the person decided.
    let claimed = &report["claimed"]["tasks"][0];
    assert_eq!(claimed["id"], "TEST-002", "{report}");
    let gate = &claimed["gates"][0];
    assert_eq!(gate["decision"], "approve", "{claimed}");
    assert_eq!(gate["answer"], "After the backup.");
    assert_eq!(gate["answeredBy"], "coordinator");
    assert_eq!(report["second_decision"]["code"], "task_closed");
}

/// A person-only gate over MCP: a coordinator's session is refused with the API's
/// `person_required`, whether it asks for the gate in `task_gate` or `task_create`; a lead's
/// session decides.
#[tokio::test]
async fn an_mcp_session_decides_a_person_only_gate_only_with_a_leads_token() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let lead = d.agent("qa", "dana", "lead").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-001", "subject": "edit calc.py"}),
    )
    .await
    .expect_status(201);
    let (gated, error) = answer(
        &call(
            &d,
            &c.token,
            "task_gate",
            json!({"id": "TEST-001", "question": "May it?", "kind": "approval", "personOnly": true}),
        )
        .await,
    );
    assert!(!error, "{gated}");
    let qid = gated["question"]["id"].as_str().unwrap().to_string();
    assert_eq!(gated["question"]["metadata"]["gate"]["personOnly"], true);

    let refused = call(
        &d,
        &c.token,
        "task_answer",
        json!({"id": qid, "decision": "approve"}),
    )
    .await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(
        refused["structuredContent"]["error"]["code"], "person_required",
        "{refused}"
    );
    let (created, error) = answer(
        &call(
            &d,
            &c.token,
            "task_create",
            json!({"tasks": {"id": "TEST-002", "subject": "y",
                   "gate": {"question": "Ship?", "kind": "approval", "personOnly": true}}}),
        )
        .await,
    );
    assert!(!error, "{created}");
    let q2 = created["tasks"][0]["blockedBy"][0]
        .as_str()
        .unwrap()
        .to_string();
    let refused = call(
        &d,
        &c.token,
        "task_answer",
        json!({"id": q2, "decision": "approve"}),
    )
    .await;
    assert_eq!(
        refused["structuredContent"]["error"]["code"], "person_required",
        "{refused}"
    );
    assert!(tester.claim(json!({})).await.is_none(), "both held");

    let (decided, error) = answer(
        &call(
            &d,
            &lead.token,
            "task_answer",
            json!({"id": qid, "decision": "approve", "answer": "ok"}),
        )
        .await,
    );
    assert!(!error, "{decided}");
    assert_eq!(decided["result"]["answeredBy"], "dana");
    assert_eq!(
        tester.claim(json!({})).await.expect("released")["id"],
        "TEST-001"
    );
}

/// `task_ask` and `task_decision`: a tester asks about the task it holds over MCP, a
/// coordinator cannot decide its person-only question, a lead can, and the decision reads the
/// same as over HTTP.
#[tokio::test]
async fn a_holder_asks_over_mcp_and_reads_the_decision() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    let lead = d.agent("qa", "dana", "lead").await;
    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-001", "subject": "migrate"}),
    )
    .await
    .expect_status(201);
    tester.claim(json!({})).await.expect("TEST-001");
    let raw = call(
        &d,
        &tester.token,
        "task_ask",
        json!({"id": "TEST-001", "question": "Drop the legacy table?", "kind": "approval",
               "personOnly": true}),
    )
    .await;
    let (asked, error) = answer(&raw);
    assert!(!error, "{raw}");
    let qid = asked["question"]["id"].as_str().unwrap().to_string();
    assert_eq!(asked["question"]["metadata"]["gate"]["asker"], "tester-1");
    assert_eq!(asked["task"]["claimedBy"], "tester-1");

    let raw = call(&d, &tester.token, "task_decision", json!({"id": qid})).await;
    let (open, error) = answer(&raw);
    assert!(!error, "{raw}");
    assert_eq!(open["status"], "open");
    assert_eq!(open["askedByHolder"], "tester-1");
    let raw = call(
        &d,
        &tester.token,
        "task_decision",
        json!({"id": qid, "waitMs": 60000}),
    )
    .await;
    assert_eq!(
        raw["structuredContent"]["error"]["code"], "invalid_field",
        "{raw}"
    );
    let raw = call(
        &d,
        &c.token,
        "task_answer",
        json!({"id": qid, "decision": "approve"}),
    )
    .await;
    assert_eq!(
        raw["structuredContent"]["error"]["code"], "person_required",
        "{raw}"
    );
    let raw = call(
        &d,
        &lead.token,
        "task_answer",
        json!({"id": qid, "decision": "approve", "answer": "Yes, after the backup."}),
    )
    .await;
    assert!(!answer(&raw).1, "{raw}");
    let raw = call(
        &d,
        &tester.token,
        "task_decision",
        json!({"id": qid, "waitMs": 1000}),
    )
    .await;
    let (decided, _) = answer(&raw);
    assert_eq!(decided["status"], "answered", "{raw}");
    assert_eq!(decided["decision"], "approve");
    assert_eq!(decided["answeredBy"], "dana");
    let http = tester
        .get(&tester.t(&format!("/tasks/{qid}/decision")))
        .await
        .expect_status(200)
        .body;
    assert_eq!(http, decided);
}

/// Leases for LLM turns: a claim over MCP without `leaseMs` gets the MCP lease, and any tool
/// call of the holder renews it, so an agent that keeps working (here: reading messages) keeps
/// its task past several lease lengths without a heartbeat; once it stops, the lease lapses.
#[tokio::test]
async fn any_call_of_the_holder_renews_its_mcp_lease() {
    let d = TestDaemon::start_with(|s| s.tasks.mcp_default_lease_ms = 1_500).await;
    let c = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-001", "subject": "long step"}),
    )
    .await
    .expect_status(201);
    let raw = call(&d, &tester.token, "task_claim", json!({})).await;
    let (claimed, error) = answer(&raw);
    assert!(!error, "{raw}");
    assert_eq!(claimed["lease"]["leaseMs"], 1500, "{claimed}");
    let first_expiry = claimed["tasks"][0]["leaseExpiresAt"]
        .as_str()
        .unwrap()
        .to_string();
    let first_expiry = chrono::DateTime::parse_from_rfc3339(&first_expiry).unwrap();
    // Keep calling an unrelated tool until three lease lengths past the first expiry.
    let until = first_expiry + chrono::Duration::milliseconds(4_500);
    while chrono::Utc::now() < until {
        let raw = call(&d, &tester.token, "msg_list", json!({"limit": 1})).await;
        assert!(!answer(&raw).1, "{raw}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let held = c.get(&c.t("/tasks/TEST-001")).await.expect_status(200).body;
    assert_eq!(held["status"], "in_progress", "{held}");
    assert_eq!(held["claimedBy"], "tester-1");
    assert_eq!(held["attempts"], 0);
    // Silent now: the lease lapses and the task goes back to the queue.
    huddle_tests::eventually(30, "the silent holder's lease lapses", || async {
        c.get(&c.t("/tasks/TEST-001")).await.body["status"] == "pending"
    })
    .await;
}
