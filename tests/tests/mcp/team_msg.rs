//! `team_msg`, Claude-Code-Workflow's message bus tool, as its skills call it (`team_msg.py`:
//! the official Python SDK): the seed's own call, 8 testers appending `state_update`s at once,
//! reads, mailboxes, delete and clear; what it did is read back over the HTTP API.

use huddle_tests::{python, TestDaemon};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::Path;

const TESTERS: usize = 8;
const APPENDS: usize = 25;

#[tokio::test]
async fn team_msg_keeps_the_upstream_contract_with_unique_ids_and_every_state_under_8_writers() {
    python::require_modules(&["mcp", "httpx2"]);
    let d = TestDaemon::start().await;
    let coordinator = d.team("qa").await;
    let observer = d.agent("qa", "watcher", "observer").await;
    let mut tokens = Vec::new();
    for i in 1..=TESTERS {
        tokens.push(d.agent("qa", &format!("tester-{i}"), "tester").await.token);
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/team_msg.py");
    let output = python::run(
        &script,
        &[
            ("HUDDLE_MCP_URL", &format!("{}/mcp", d.url)),
            ("HUDDLE_TEAM", "qa"),
            ("HUDDLE_COORDINATOR", &coordinator.token),
            ("HUDDLE_OBSERVER", &observer.token),
            ("HUDDLE_TESTERS", &tokens.join(",")),
            ("HUDDLE_APPENDS", &APPENDS.to_string()),
        ],
    )
    .await;
    let r: Value = serde_json::from_slice(&output.stdout).expect("the script's JSON report");

    // Every upstream operation and parameter is in the schema.
    let ops = &r["schema"]["$defs"]["Operation"];
    let ops = ops.to_string();
    for op in [
        "log",
        "read",
        "list",
        "status",
        "delete",
        "clear",
        "broadcast",
        "get_state",
        "read_mailbox",
        "mailbox_status",
    ] {
        assert!(ops.contains(&format!("\"{op}\"")), "{op} missing: {ops}");
    }
    let props = r["schema"]["properties"].as_object().expect("properties");
    for p in [
        "operation",
        "session_id",
        "team",
        "from",
        "to",
        "type",
        "summary",
        "data",
        "id",
        "last",
        "role",
        "delivery_method",
        "ref",
    ] {
        assert!(props.contains_key(p), "parameter {p} missing");
    }

    // The seed's call: `team`, an empty type (→ message), the caller stored as sender.
    assert_eq!(
        r["seed_log"],
        json!({"id": "MSG-001",
               "message": "Logged MSG-001: [tester-1 → coordinator] TEST-001通过: 98% pass rate"})
    );
    let seed = &r["read_seed"];
    assert_eq!(
        (&seed["type"], &seed["to"], &seed["from"]),
        (&json!("message"), &json!("coordinator"), &json!("tester-1"))
    );
    assert!(seed.get("data").is_none(), "{seed}");
    assert_eq!(r["defaults_log"]["id"], "MSG-002");
    let generated = r["defaults_log"]["message"].as_str().unwrap();
    assert!(
        generated.ends_with("[tester] message → coordinator"),
        "{generated}"
    );
    assert_eq!(r["read_ref"]["data"], json!({"ref": "src/a.ts"}));
    assert_eq!(r["read_ref"]["type"], "impl_progress");

    // 200 appends at once: 200 distinct ids, exactly the seqs after the first three.
    let ids: BTreeSet<String> = r["appended_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_str().unwrap().to_string())
        .collect();
    let total = TESTERS * APPENDS;
    let expected: BTreeSet<String> = (4..4 + total).map(|n| format!("MSG-{n:03}")).collect();
    assert_eq!(ids, expected);

    // Every tester's last state_update is in the shared memory, under its name.
    let states = r["state_all"]["role_state"].as_object().unwrap();
    assert_eq!(states.len(), TESTERS, "{states:?}");
    for i in 1..=TESTERS {
        let state = &states[&format!("tester-{i}")];
        assert_eq!(state["step"], APPENDS - 1, "tester-{i}: {state}");
        assert_eq!(state["writer"], format!("tester-{i}"));
        assert!(state["_updated_at"].is_string());
    }
    assert_eq!(r["state_one"]["role"], "tester-3");
    assert_eq!(r["state_one"]["state"]["step"], APPENDS - 1);
    assert_eq!(r["state_none"]["state"], Value::Null);

    // list: the last 20 by default, oldest first; filters; `formatted` lines.
    let last_seq = 3 + total + 1;
    let list = &r["list_default"];
    assert_eq!(
        (&list["total"], &list["showing"]),
        (&json!(last_seq), &json!(20))
    );
    let listed = list["messages"].as_array().unwrap();
    assert_eq!(listed.last().unwrap()["id"], format!("MSG-{last_seq:03}"));
    assert_eq!(listed[0]["id"], format!("MSG-{:03}", last_seq - 19));
    assert_eq!(list["formatted"].as_str().unwrap().lines().count(), 20);
    let filtered = &r["list_filtered"];
    assert_eq!(
        (&filtered["total"], &filtered["showing"]),
        (&json!(APPENDS), &json!(3))
    );
    assert!(filtered["messages"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["from"] == "tester-2" && m["type"] == "state_update"));

    // status per member.
    let members = r["status"]["members"].as_array().unwrap();
    let count = |name: &str| {
        members
            .iter()
            .find(|m| m["member"] == name)
            .unwrap_or_else(|| panic!("{name} in {members:?}"))["messageCount"]
            .clone()
    };
    assert_eq!(count("tester-1"), json!(3 + APPENDS));
    assert_eq!(count("tester-5"), json!(APPENDS));
    assert_eq!(count("coordinator"), json!(1));
    assert_eq!(count("watcher"), json!(0));
    assert_eq!(r["status"]["total_messages"], last_seq);

    // Mailboxes: reading delivers; counts follow; a broadcast reaches every tester.
    let to_coordinator = 3 + total;
    assert_eq!(r["mailbox_before"]["unread"], to_coordinator);
    let read = &r["mailbox_read"];
    assert_eq!(
        (&read["count"], &read["delivery_method"]),
        (&json!(5), &json!("inject"))
    );
    assert_eq!(read["messages"][0]["id"], "MSG-001");
    assert_eq!(r["mailbox_after_one_read"]["unread"], to_coordinator - 5);
    let mailbox = &r["tester_mailbox"]["messages"];
    let kinds: Vec<&str> = mailbox
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["state_update", "shutdown"], "{mailbox}");
    assert_eq!(mailbox[1]["to"], "all");
    assert_eq!(r["tester_mailbox_again"]["count"], 0);

    // Refusals carry the API's codes.
    let refusals = &r["refusals"];
    for (case, code) in [
        ("tester_delete", "forbidden"),
        ("observer_log", "forbidden"),
        ("other_team", "not_found"),
        ("no_session", "invalid_field"),
        ("not_me", "invalid_field"),
        ("last_too_big", "invalid_field"),
        ("unknown_id", "not_found"),
        ("no_from", "invalid_field"),
        ("bad_type", "invalid_field"),
    ] {
        assert_eq!(refusals[case]["code"], code, "{case}: {}", refusals[case]);
    }

    // delete and clear hide from team_msg; the history keeps every message.
    let broadcast_seq = last_seq + 1;
    assert_eq!(r["deleted"]["deleted"], "MSG-001");
    assert_eq!(r["read_deleted"]["code"], "not_found");
    assert_eq!(r["list_after_delete"]["total"], broadcast_seq - 1);
    assert_eq!(r["cleared"]["cleared"], broadcast_seq - 1);
    assert_eq!(r["list_after_clear"]["total"], 0);
    assert_eq!(
        r["after_clear_log"]["id"],
        format!("MSG-{:03}", broadcast_seq + 1)
    );
    assert_eq!(r["list_after_clear_log"]["total"], 1);
    assert_eq!(r["status_after_clear"]["total_messages"], 1);

    let all = coordinator
        .get(&coordinator.t("/messages?limit=1000"))
        .await
        .expect_status(200)
        .body;
    let stored = all["messages"].as_array().unwrap();
    assert_eq!(stored.len(), broadcast_seq + 1, "history kept whole");
    assert_eq!(stored[0]["summary"], "TEST-001通过: 98% pass rate");

    let memory = coordinator
        .get(&coordinator.t("/memory"))
        .await
        .expect_status(200)
        .body;
    let doc = &memory["doc"];
    assert_eq!(doc["pipeline_mode"], "full");
    assert_eq!(doc["roles"], json!(["tester"]));
    assert_eq!(doc["role_state"]["coordinator"]["pipeline_mode"], "full");
    assert_eq!(doc["team_msg"]["cleared_through"], broadcast_seq);
    assert_eq!(doc["team_msg"]["deleted"]["MSG-001"]["by"], "coordinator");
}
