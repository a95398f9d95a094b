//! The typed client against the health, team, agent and task endpoints, including how the
//! daemon's errors map onto `huddle_sdk::Error` (claims are in `sdk_claims.rs`).

use huddle_sdk::wire::{NewTask, Role, TaskPatch, TaskStatus};
use huddle_sdk::{Client, Error, TaskQuery};
use huddle_tests::clients;
use huddle_tests::TestDaemon;
use serde_json::json;

#[tokio::test]
async fn health_teams_and_agents_work_and_errors_carry_code_and_message() {
    let d = TestDaemon::start().await;
    let admin = clients::admin(&d);
    admin.health().await.expect("healthz");
    assert!(admin.ready().await.expect("readyz"));

    let team = admin.create_team("qa").await.expect("team");
    assert_eq!(team.name, "qa");
    let dup = admin.create_team("qa").await.unwrap_err();
    assert_eq!(
        (dup.status(), dup.code()),
        (Some(409), Some("duplicate_team"))
    );
    assert!(
        dup.to_string().contains("qa"),
        "message names the team: {dup}"
    );

    let bad = admin.create_team("Not A Name").await.unwrap_err();
    let api = bad.api().expect("an API error");
    assert_eq!((api.status, api.code.as_str()), (400, "invalid_field"));
    assert!(!api.message.is_empty());

    let created = admin
        .with_team("qa")
        .create_agent("tester-1", Role::Tester)
        .await
        .expect("agent");
    assert_eq!(
        (created.name.as_str(), created.role),
        ("tester-1", Role::Tester)
    );
    assert!(!created.token.is_empty());
    let tester = admin.with_token(&created.token).with_team("qa");
    let agents = tester.list_agents().await.expect("agents");
    assert_eq!(
        agents.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
        ["tester-1"]
    );

    let forbidden = tester
        .create_agent("sneaky", Role::Coordinator)
        .await
        .unwrap_err();
    assert_eq!(
        (forbidden.status(), forbidden.code()),
        (Some(403), Some("forbidden"))
    );
    let unknown = Client::new(&d.url, "no-such-token")
        .unwrap()
        .with_team("qa");
    let unauthorized = unknown.list_agents().await.unwrap_err();
    assert_eq!(
        (unauthorized.status(), unauthorized.code()),
        (Some(401), Some("unauthorized"))
    );
    let elsewhere = tester.with_team("other").list_agents().await.unwrap_err();
    assert!(elsewhere.is_not_found(), "{elsewhere}");
    let no_team = Client::new(&d.url, &created.token)
        .unwrap()
        .list_agents()
        .await
        .unwrap_err();
    assert!(matches!(no_team, Error::NoTeam), "{no_team:?}");
}

#[tokio::test]
async fn tasks_are_created_listed_paged_read_and_updated() {
    let d = TestDaemon::start().await;
    let coord = clients::team(&d, "qa").await;

    let first = coord
        .create_task(&NewTask {
            prefix: Some("TEST".into()),
            subject: "unit".into(),
            ..NewTask::default()
        })
        .await
        .expect("numbered task");
    assert_eq!(
        (first.id.as_str(), first.status),
        ("TEST-001", TaskStatus::Pending)
    );
    let batch = coord
        .create_tasks(&[
            NewTask {
                blocked_by: vec!["TEST-001".into()],
                ..clients::task("TEST-002", "e2e")
            },
            NewTask {
                owner: Some("executor".into()),
                ..clients::task("QARUN-001", "run")
            },
        ])
        .await
        .expect("batch");
    assert_eq!(batch.len(), 2);
    assert_eq!(batch[0].blocked_by, ["TEST-001"]);

    let duplicate = coord
        .create_task(&clients::task("TEST-001", "again"))
        .await
        .unwrap_err();
    assert_eq!(
        (duplicate.status(), duplicate.code()),
        (Some(409), Some("duplicate_id"))
    );
    let cycle = coord
        .update_task(
            "TEST-001",
            &TaskPatch {
                add_blocked_by: vec!["TEST-002".into()],
                ..TaskPatch::default()
            },
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(cycle.code(), Some("dependency_cycle"));
    assert!(
        cycle.api().unwrap().details["cycle"].is_array(),
        "details name the cycle: {cycle:?}"
    );

    let ready = coord
        .list_tasks(&TaskQuery {
            ready: true,
            ..TaskQuery::default()
        })
        .await
        .expect("ready");
    let mut ids: Vec<_> = ready.tasks.iter().map(|t| t.id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, ["QARUN-001", "TEST-001"]);
    let tests = coord
        .list_tasks(&TaskQuery {
            prefix: Some("TEST".into()),
            ..TaskQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(tests.tasks.len(), 2);
    let owned = coord
        .list_tasks(&TaskQuery {
            owner: Some("executor".into()),
            ..TaskQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(owned.tasks[0].id, "QARUN-001");
    let page = coord
        .list_tasks(&TaskQuery {
            limit: Some(2),
            ..TaskQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(page.tasks.len(), 2);
    assert!(page.next.is_some(), "a full page has a next cursor");
    let all = coord
        .list_all_tasks(&TaskQuery {
            limit: Some(1),
            ..TaskQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(all.len(), 3, "list_all_tasks follows next");

    let read = coord.get_task("TEST-001").await.expect("get");
    assert_eq!(read.blocks, ["TEST-002"]);
    assert!(coord.get_task("TEST-404").await.unwrap_err().is_not_found());

    let patch = TaskPatch {
        subject: Some("unit tests".into()),
        metadata: Some(json!({"layer": "unit"})),
        ..TaskPatch::default()
    };
    let updated = coord
        .update_task("TEST-001", &patch, Some(read.version))
        .await
        .expect("update");
    assert_eq!(
        (updated.subject.as_str(), updated.version),
        ("unit tests", read.version + 1)
    );
    assert_eq!(updated.metadata["layer"], "unit");
    let stale = coord
        .update_task("TEST-001", &patch, Some(read.version))
        .await
        .unwrap_err();
    assert!(stale.is_stale(), "{stale}");
    assert_eq!(stale.code(), Some("stale_version"));
    let bad = coord
        .create_task(&NewTask {
            prefix: Some("lower".into()),
            subject: "x".into(),
            ..NewTask::default()
        })
        .await
        .unwrap_err();
    assert_eq!(bad.status(), Some(400));
}

#[tokio::test]
async fn agent_tokens_are_rotated_and_revoked() {
    let d = TestDaemon::start().await;
    let coord = clients::team(&d, "qa").await;
    let tester = clients::agent(&d, "qa", "tester-1", Role::Tester).await;
    tester.list_agents().await.expect("the first token works");

    let rotated = coord.rotate_agent("tester-1").await.expect("rotate");
    assert_eq!(
        (rotated.name.as_str(), rotated.role),
        ("tester-1", Role::Tester)
    );
    assert_eq!(
        tester.list_agents().await.unwrap_err().status(),
        Some(401),
        "the old token is gone"
    );
    let renewed = coord.with_token(&rotated.token);
    renewed.list_agents().await.expect("the new token works");

    let revoked = coord.revoke_agent("tester-1").await.expect("revoke");
    assert_eq!(revoked.name, "tester-1");
    assert_eq!(renewed.list_agents().await.unwrap_err().status(), Some(401));
    assert!(coord
        .revoke_agent("nobody")
        .await
        .unwrap_err()
        .is_not_found());
}
