//! An import is checked as the API checks the same writes: a `blockedBy` cycle, a name the
//! API refuses, a reserved name, a message to nobody, a field past its limit — each is named
//! in one 400 listing every problem (bounded), and nothing is kept. A lead never comes in
//! with a working token: it is restored revoked and works again once the admin rotates it.

use huddle_tests::{Api, TestDaemon};
use reqwest::Method;
use serde_json::{json, Value};

/// A team `qa`: a coordinator, a tester, a lead, two tasks (002 blocked by 001), a message.
async fn small_team(d: &TestDaemon) -> (Api, Api, Api) {
    let c = d.team("qa").await;
    let t = d.agent("qa", "tester", "tester").await;
    let lead = d.agent("qa", "boss", "lead").await;
    c.post(
        &c.t("/tasks"),
        json!([
            {"id": "TEST-001", "subject": "first"},
            {"id": "TEST-002", "subject": "second", "blockedBy": ["TEST-001"]},
        ]),
    )
    .await
    .expect_status(201);
    t.post(
        &t.t("/messages"),
        json!({"to": "coordinator", "type": "impl_progress", "summary": "on it"}),
    )
    .await
    .expect_status(201);
    (c, t, lead)
}

/// The team's export as parsed lines, and the team deleted (its name free for the import).
async fn export_and_delete(d: &TestDaemon, team: &str) -> Vec<Value> {
    let reply = d
        .admin()
        .send(Method::GET, &format!("/v1/teams/{team}/export"), None, &[])
        .await
        .expect_status(200);
    let Value::String(text) = reply.body else {
        panic!("an export is lines of JSON: {}", reply.body)
    };
    d.admin()
        .send(Method::DELETE, &format!("/v1/teams/{team}"), None, &[])
        .await
        .expect_status(204);
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn text_of(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

async fn import(d: &TestDaemon, team: &str, lines: &[Value]) -> huddle_tests::http::Reply {
    d.admin()
        .send(
            Method::POST,
            &format!("/v1/teams/{team}/import"),
            Some(text_of(lines).into_bytes()),
            &[],
        )
        .await
}

/// The line (1-based) of the first record matching `kind` and `pick`.
fn line_of(lines: &[Value], kind: &str, pick: impl Fn(&Value) -> bool) -> usize {
    1 + lines
        .iter()
        .position(|l| l["kind"] == kind && pick(l))
        .unwrap_or_else(|| panic!("no {kind} record"))
}

async fn team_names(d: &TestDaemon) -> Vec<Value> {
    let teams = d.admin().get("/v1/teams").await.expect_status(200).body;
    teams["teams"].as_array().unwrap().clone()
}

#[tokio::test]
async fn an_import_the_api_would_refuse_is_refused_whole_listing_every_problem() {
    let d = TestDaemon::start().await;
    small_team(&d).await;
    let mut lines = export_and_delete(&d, "qa").await;
    let first = line_of(&lines, "task", |l| l["id"] == "TEST-001");
    let tester = line_of(&lines, "agent", |l| l["name"] == "tester");
    let message = line_of(&lines, "message", |_| true);
    // TEST-001 blocked by TEST-002, which is blocked by TEST-001: a task that never runs.
    lines[first - 1]["blockedBy"] = json!(["TEST-002"]);
    lines[first - 1]["subject"] = json!("x".repeat(100_000));
    lines[tester - 1]["name"] = json!("Tester Two");
    lines[message - 1]["to"] = json!("nobody");
    let reply = import(&d, "qa", &lines)
        .await
        .expect_error(400, "invalid_body");
    let details = &reply.body["error"]["details"];
    assert_eq!(details["total"], 4, "{details}");
    let problems = details["problems"].as_array().unwrap();
    let find = |line: usize, says: &str| {
        problems
            .iter()
            .any(|p| p["line"] == line && p["message"].as_str().is_some_and(|m| m.contains(says)))
    };
    assert!(find(tester, "must match [a-z0-9]"), "{details}");
    assert!(find(first, "longer than"), "{details}");
    assert!(find(message, "unknown recipient \"nobody\""), "{details}");
    let second = line_of(&lines, "task", |l| l["id"] == "TEST-002");
    assert!(
        find(second, "adding TEST-001 as a blocker of TEST-002 would close a cycle: TEST-002 → TEST-001 → TEST-002"),
        "the cycle is named as the API names it: {details}"
    );
    let message_text = reply.body["error"]["message"].as_str().unwrap();
    assert!(
        message_text.contains("nothing was imported"),
        "{message_text}"
    );
    assert!(team_names(&d).await.is_empty(), "nothing is kept");

    // The cycle alone is enough; the blockers of a task the file does not hold, too.
    let mut lines = export_from_scratch(&d).await;
    let first = line_of(&lines, "task", |l| l["id"] == "TEST-001");
    lines[first - 1]["blockedBy"] = json!(["TEST-002"]);
    let reply = import(&d, "qa", &lines).await;
    let reply = reply.expect_error(400, "invalid_body");
    assert_eq!(reply.body["error"]["details"]["total"], 1);
    let problem = &reply.body["error"]["details"]["problems"][0];
    assert_eq!(problem["line"], first + 1, "TEST-002's line: {problem}");
    assert!(problem["message"]
        .as_str()
        .unwrap()
        .contains("close a cycle"));
    lines[first - 1]["blockedBy"] = json!(["TEST-009"]);
    let reply = import(&d, "qa", &lines)
        .await
        .expect_error(400, "invalid_body");
    let says = reply.body["error"]["details"]["problems"][0]["message"].clone();
    assert_eq!(says, "unknown blocker task TEST-009");
    assert!(team_names(&d).await.is_empty());
    lines[first - 1]["blockedBy"] = json!([]);
    import(&d, "qa", &lines).await.expect_status(201);
}

/// A fresh `qa`, exported and deleted again.
async fn export_from_scratch(d: &TestDaemon) -> Vec<Value> {
    small_team(d).await;
    export_and_delete(d, "qa").await
}

#[tokio::test]
async fn agents_come_in_only_under_names_the_api_would_give() {
    let d = TestDaemon::start_with(|s| s.limits.max_agents_per_team = 3).await;
    small_team(&d).await;
    let mut lines = export_and_delete(&d, "qa").await;
    let tester = line_of(&lines, "agent", |l| l["name"] == "tester");
    lines[tester - 1]["name"] = json!("human");
    // Two more working agents: the second is past the team's limit of three (the lead comes
    // in revoked, so it is not counted).
    for (i, name) in ["tester-2", "tester-3"].iter().enumerate() {
        let mut extra = lines[tester - 1].clone();
        extra["name"] = json!(name);
        extra["tokenHash"] = json!(i.to_string().repeat(64));
        lines.insert(tester + i, extra);
    }
    let end = lines.len() - 1;
    lines[end]["records"] = json!(end);
    let reply = import(&d, "qa", &lines).await;
    let reply = reply.expect_error(400, "invalid_body");
    let problems = reply.body["error"]["details"]["problems"].clone();
    assert_eq!(problems.as_array().unwrap().len(), 2, "{problems}");
    assert_eq!(problems[0]["line"], tester);
    assert!(problems[0]["message"]
        .as_str()
        .unwrap()
        .contains("reserved"));
    assert_eq!(problems[1]["line"], tester + 2);
    assert!(problems[1]["message"]
        .as_str()
        .unwrap()
        .contains("max_agents_per_team"));
    assert!(team_names(&d).await.is_empty());

    // No file holds an admin: the admin token is the daemon's, not an agent's role.
    lines[tester - 1]["name"] = json!("tester");
    lines[tester - 1]["role"] = json!("admin");
    let reply = import(&d, "qa", &lines)
        .await
        .expect_error(400, "invalid_body");
    let message = reply.body["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("line {tester}: ")),
        "{message}"
    );
    assert!(message.contains("admin"), "{message}");
    assert!(team_names(&d).await.is_empty());
}

#[tokio::test]
async fn the_list_of_problems_is_bounded_and_counts_the_rest() {
    let d = TestDaemon::start().await;
    small_team(&d).await;
    let mut lines = export_and_delete(&d, "qa").await;
    let message = line_of(&lines, "message", |_| true);
    let bad: Vec<Value> = (0..80)
        .map(|i| {
            let mut m = lines[message - 1].clone();
            m["seq"] = json!(100 + i);
            m["id"] = json!(format!("00000000-0000-0000-0000-{i:012}"));
            m["type"] = json!("Not A Type");
            m
        })
        .collect();
    lines.splice(message..message, bad);
    let end = lines.len() - 1;
    lines[end]["records"] = json!(end);
    let reply = import(&d, "qa", &lines)
        .await
        .expect_error(400, "invalid_body");
    let details = &reply.body["error"]["details"];
    assert_eq!(details["total"], 80);
    assert_eq!(details["problems"].as_array().unwrap().len(), 50);
    let message_text = reply.body["error"]["message"].as_str().unwrap();
    assert!(message_text.contains("and 77 more"), "{message_text}");
}

#[tokio::test]
async fn a_lead_comes_in_revoked_and_works_once_the_admin_rotates_it() {
    let d = TestDaemon::start().await;
    let (_, t, lead) = small_team(&d).await;
    let lines = export_and_delete(&d, "qa").await;
    import(&d, "qa", &lines).await.expect_status(201);
    // The tester's token still works; the person's does not.
    t.get(&t.t("/tasks")).await.expect_status(200);
    lead.get(&lead.t("/me"))
        .await
        .expect_error(401, "unauthorized");
    // A lead from the file with a hash its author chose: refused all the same.
    let agents = d
        .admin()
        .get("/v1/teams/qa/agents")
        .await
        .expect_status(200);
    let boss = agents.body["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "boss")
        .cloned()
        .expect("the lead is listed");
    assert_eq!(boss["role"], "lead");
    let rotated = d
        .admin()
        .post("/v1/teams/qa/agents/boss/rotate", json!({}))
        .await
        .expect_status(200);
    let token = rotated.body["token"].as_str().unwrap();
    let boss = Api::new(&d.url, token).in_team("qa");
    let me = boss.get(&boss.t("/me")).await.expect_status(200);
    assert_eq!(me.body["role"], "lead");
}
