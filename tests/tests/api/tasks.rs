//! The shared task list over real HTTP: ids, batches, listing, dependencies, versions, isolation.

use huddle_tests::TestDaemon;
use serde_json::json;

#[tokio::test]
async fn tasks_get_explicit_or_numbered_ids_and_list_in_id_order_with_cursors() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let one = c
        .post(
            &c.t("/tasks"),
            json!({"prefix": "TEST", "subject": "first"}),
        )
        .await
        .expect_status(201);
    assert_eq!(one.body["id"], "TEST-001");
    assert_eq!(one.headers["etag"], "\"1\"");
    let batch: Vec<_> = (0..12)
        .map(|i| json!({"prefix": "TEST", "subject": format!("t{i}")}))
        .collect();
    let made = c
        .post(&c.t("/tasks"), json!(batch))
        .await
        .expect_status(201);
    assert_eq!(made.body.as_array().unwrap().len(), 12);
    assert_eq!(made.body[11]["id"], "TEST-013");
    c.post(
        &c.t("/tasks"),
        json!({"id": "QARUN-007", "subject": "run", "owner": "executor"}),
    )
    .await
    .expect_status(201);

    let mut seen = Vec::new();
    let mut after = String::new();
    loop {
        let path = if after.is_empty() {
            c.t("/tasks?limit=5")
        } else {
            c.t(&format!("/tasks?limit=5&after={after}"))
        };
        let page = c.get(&path).await.expect_status(200);
        seen.extend(
            page.body["tasks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["id"].as_str().unwrap().to_string()),
        );
        match page.body["next"].as_str() {
            Some(next) => after = next.to_string(),
            None => break,
        }
    }
    let mut want = vec!["QARUN-007".to_string()];
    want.extend((1..=13).map(|i| format!("TEST-{i:03}")));
    assert_eq!(seen, want);

    let owned = c
        .get(&c.t("/tasks?owner=executor"))
        .await
        .expect_status(200);
    assert_eq!(owned.body["tasks"].as_array().unwrap().len(), 1);
    let prefixed = c
        .get(&c.t("/tasks?prefix=QARUN&status=pending"))
        .await
        .expect_status(200);
    assert_eq!(prefixed.body["tasks"][0]["id"], "QARUN-007");
}

#[tokio::test]
async fn blocks_mirror_blocked_by_and_ready_lists_only_claimable_tasks() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    c.post(
        &c.t("/tasks"),
        json!([
            {"id": "TEST-001", "subject": "a"},
            {"id": "TEST-002", "subject": "b"},
            {"id": "TEST-003", "subject": "c", "blockedBy": ["TEST-001", "TEST-002"]}
        ]),
    )
    .await
    .expect_status(201);
    let t1 = c.get(&c.t("/tasks/TEST-001")).await.expect_status(200);
    assert_eq!(t1.body["blocks"], json!(["TEST-003"]));
    let t3 = c.get(&c.t("/tasks/TEST-003")).await.expect_status(200);
    assert_eq!(t3.body["blockedBy"], json!(["TEST-001", "TEST-002"]));
    let ready = c.get(&c.t("/tasks?ready=true")).await.expect_status(200);
    let ids: Vec<_> = ready.body["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].clone())
        .collect();
    assert_eq!(ids, [json!("TEST-001"), json!("TEST-002")]);

    let removed = c
        .patch(
            &c.t("/tasks/TEST-003"),
            json!({"removeBlockedBy": ["TEST-001", "TEST-002"]}),
        )
        .await
        .expect_status(200);
    assert_eq!(removed.body["blockedBy"], json!([]));
    let ready = c.get(&c.t("/tasks?ready=true")).await.expect_status(200);
    assert_eq!(ready.body["tasks"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn edits_honour_if_match_and_merge_metadata() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-001", "subject": "a", "metadata": {"layer": "L1", "keep": 1}}),
    )
    .await
    .expect_status(201);
    let path = c.t("/tasks/TEST-001");
    let body =
        json!({"activeForm": "Running unit tests", "metadata": {"layer": "L2", "keep": null}})
            .to_string()
            .into_bytes();
    let ok = c
        .send(
            reqwest::Method::PATCH,
            &path,
            Some(body.clone()),
            &[("If-Match", "\"1\"")],
        )
        .await
        .expect_status(200);
    assert_eq!(ok.body["version"], 2);
    assert_eq!(ok.body["metadata"], json!({"layer": "L2"}));
    assert_eq!(ok.body["activeForm"], "Running unit tests");
    let stale = c
        .send(
            reqwest::Method::PATCH,
            &path,
            Some(body),
            &[("If-Match", "1")],
        )
        .await;
    let stale = stale.expect_error(412, "stale_version");
    assert_eq!(stale.body["error"]["details"]["currentVersion"], 2);
}

#[tokio::test]
async fn cycles_are_refused_with_409_naming_them_and_unknown_blockers_with_400() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    c.post(&c.t("/tasks"), json!([{"id": "TEST-001", "subject": "a"}, {"id": "TEST-002", "subject": "b", "blockedBy": ["TEST-001"]}]))
        .await
        .expect_status(201);
    let cycle = c
        .patch(
            &c.t("/tasks/TEST-001"),
            json!({"addBlockedBy": ["TEST-002"]}),
        )
        .await
        .expect_error(409, "dependency_cycle");
    assert_eq!(
        cycle.body["error"]["details"]["cycle"],
        json!(["TEST-001", "TEST-002", "TEST-001"])
    );
    assert!(cycle.body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("TEST-001 → TEST-002 → TEST-001"));
    let unknown = c
        .post(
            &c.t("/tasks"),
            json!({"id": "TEST-003", "subject": "c", "blockedBy": ["TEST-404"]}),
        )
        .await;
    let unknown = unknown.expect_error(400, "invalid_field");
    assert_eq!(unknown.body["error"]["details"]["field"], "blockedBy");
    c.get(&c.t("/tasks/TEST-003"))
        .await
        .expect_error(404, "not_found");
    // A batch may form a cycle only among its own tasks: refused as a whole.
    c.post(
        &c.t("/tasks"),
        json!([{"id": "TEST-010", "subject": "x", "blockedBy": ["TEST-011"]}, {"id": "TEST-011", "subject": "y", "blockedBy": ["TEST-010"]}]),
    )
    .await
    .expect_error(409, "dependency_cycle");
    c.get(&c.t("/tasks/TEST-010"))
        .await
        .expect_error(404, "not_found");
}

#[tokio::test]
async fn another_teams_token_sees_nothing_and_observers_only_read() {
    let d = TestDaemon::start().await;
    let a = d.team("alpha").await;
    let b = d.team("beta").await;
    a.post(
        &a.t("/tasks"),
        json!({"id": "TEST-001", "subject": "secret"}),
    )
    .await
    .expect_status(201);
    let intruder = b.clone().in_team("alpha");
    intruder
        .get(&intruder.t("/tasks/TEST-001"))
        .await
        .expect_error(404, "not_found");
    intruder
        .get(&intruder.t("/tasks"))
        .await
        .expect_error(404, "not_found");
    intruder
        .get(&intruder.t("/messages"))
        .await
        .expect_error(404, "not_found");
    intruder
        .post(
            &intruder.t("/tasks"),
            json!({"id": "TEST-002", "subject": "x"}),
        )
        .await
        .expect_error(404, "not_found");

    let watcher = d.agent("alpha", "watcher", "observer").await;
    watcher
        .get(&watcher.t("/tasks/TEST-001"))
        .await
        .expect_status(200);
    watcher
        .post(
            &watcher.t("/tasks"),
            json!({"id": "TEST-002", "subject": "x"}),
        )
        .await
        .expect_error(403, "forbidden");
    watcher
        .post(&watcher.t("/tasks/claim"), json!({"prefixes": ["TEST"]}))
        .await
        .expect_error(403, "forbidden");

    let nobody = huddle_tests::Api::new(&d.url, "hud_not_a_token").in_team("alpha");
    nobody
        .get(&nobody.t("/tasks"))
        .await
        .expect_error(401, "unauthorized");
    let admin = d.admin().in_team("alpha");
    admin
        .get(&admin.t("/tasks"))
        .await
        .expect_error(403, "forbidden");
    let tester = d.agent("alpha", "tester", "tester").await;
    tester
        .post("/v1/teams", json!({"name": "gamma"}))
        .await
        .expect_error(403, "forbidden");
    tester
        .post(&tester.t("/agents"), json!({"name": "x", "role": "tester"}))
        .await
        .expect_error(403, "forbidden");
    let added = a
        .post(&a.t("/agents"), json!({"name": "x", "role": "tester"}))
        .await
        .expect_status(201);
    assert!(added.body["token"].as_str().unwrap().starts_with("hud_"));
    let agents = watcher.get(&watcher.t("/agents")).await.expect_status(200);
    assert!(agents.body["agents"]
        .as_array()
        .unwrap()
        .iter()
        .all(|a| a.get("token").is_none()));
}

/// A status set by hand never strands a task: `in_progress` comes only from a claim, and
/// `completed` waits for the blockers unless forced.
#[tokio::test]
async fn hand_set_statuses_cannot_strand_a_task() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    for body in [
        json!({"id": "TEST-001", "subject": "first"}),
        json!({"id": "TEST-002", "subject": "second", "blockedBy": ["TEST-001"]}),
    ] {
        c.post(&c.t("/tasks"), body).await.expect_status(201);
    }

    let refused = c
        .patch(&c.t("/tasks/TEST-001"), json!({"status": "in_progress"}))
        .await
        .expect_error(409, "invalid_transition");
    assert!(
        refused.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("claim"),
        "{}",
        refused.body
    );
    let blocked = c
        .patch(&c.t("/tasks/TEST-002"), json!({"status": "completed"}))
        .await
        .expect_error(409, "blocked");
    assert_eq!(
        blocked.body["error"]["details"]["blockedBy"],
        json!(["TEST-001"])
    );
    let unchanged = c.get(&c.t("/tasks/TEST-002")).await.expect_status(200);
    assert_eq!(unchanged.body["status"], "pending");
    assert_eq!(
        unchanged.body["version"], 1,
        "a refused patch changes nothing"
    );

    // Dropping the blocker in the same patch is judged on the edges it leaves.
    let done = c
        .patch(
            &c.t("/tasks/TEST-002"),
            json!({"status": "completed", "removeBlockedBy": ["TEST-001"]}),
        )
        .await
        .expect_status(200);
    assert_eq!(done.body["status"], "completed");
    assert_eq!(done.body["blockedBy"], json!([]));

    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-003", "subject": "third", "blockedBy": ["TEST-001"]}),
    )
    .await
    .expect_status(201);
    let forced = c
        .patch(
            &c.t("/tasks/TEST-003"),
            json!({"status": "completed", "force": true}),
        )
        .await
        .expect_status(200);
    assert_eq!(forced.body["status"], "completed");
    assert!(forced.body["claimedBy"].is_null());
}
