//! Operating huddle across releases, with real `huddled` processes: `huddled migrate`,
//! `--no-migrate` replicas, a binary serving a database a newer release migrated (the
//! expand/contract policy of `store::schema`), and `huddled backup` of a live SQLite database.

mod backup;
mod postgres_schema;
mod sqlite_schema;

use huddle_tests::Api;
use serde_json::json;

/// A configured admin token (at least 32 characters).
pub const ADMIN: &str = "upgrades-admin-token-0123456789abcdef";

/// Proves a daemon at `url` serves: a team, an agent, a task created, claimed and completed.
pub async fn serves(url: &str, team: &str) {
    let admin = Api::new(url, ADMIN);
    admin
        .post("/v1/teams", json!({"name": team}))
        .await
        .expect_status(201);
    let token = |name: &'static str| {
        let admin = admin.clone();
        let path = format!("/v1/teams/{team}/agents");
        async move {
            let r = admin
                .post(&path, json!({"name": name, "role": name}))
                .await
                .expect_status(201);
            r.body["token"].as_str().unwrap().to_string()
        }
    };
    let coordinator = Api::new(url, &token("coordinator").await).in_team(team);
    let api = Api::new(url, &token("tester").await).in_team(team);
    coordinator
        .post(
            &coordinator.t("/tasks"),
            json!({"id": "TEST-001", "subject": "s"}),
        )
        .await
        .expect_status(201);
    let claimed = api
        .claim(json!({"prefixes": ["TEST"], "leaseMs": 60000}))
        .await
        .expect("the task is claimed");
    assert_eq!(claimed["id"], "TEST-001");
    api.post(
        &api.t("/tasks/TEST-001/complete"),
        json!({"result": {"ok": true}}),
    )
    .await
    .expect_status(200);
}
