//! A claim filtered by project takes only tasks of that project (metadata `project`) and, unless
//! strict, tasks naming none; the SQLite memo of empty claims keeps a search per filter.

use huddle_daemon::store::rules::ProjectFilter;
use huddle_daemon::store::{Caller, Store, StoreError};
use huddle_sdk::wire::{NewTask, Role, TaskPatch};
use huddle_tests::store::{agent, backends, prefixes, task, team};
use serde_json::json;

fn of(id: &str, project: Option<&str>) -> NewTask {
    NewTask {
        metadata: project.map(|p| json!({ "project": p, "area": "x" })),
        ..task(id, &[])
    }
}

fn filter(name: &str, strict: bool) -> Option<ProjectFilter> {
    Some(ProjectFilter {
        name: name.into(),
        strict,
    })
}

async fn claim(store: &dyn Store, who: &Caller, project: Option<ProjectFilter>) -> Vec<String> {
    store
        .claim_project_tasks(who, prefixes("TEST"), project, 60_000, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.id)
        .collect()
}

#[tokio::test]
async fn a_project_claim_takes_its_project_and_unnamed_tasks_never_another_project() {
    for (store, _dir) in backends().await {
        let store = &*store;
        let (coord, _, _) = team(store, "qa").await;
        let calc = agent(store, coord.team_id, "qa", "calc-tester", Role::Tester).await;
        let strict = agent(store, coord.team_id, "qa", "strict-tester", Role::Tester).await;
        let any = agent(store, coord.team_id, "qa", "any-tester", Role::Tester).await;
        let tasks = vec![
            of("TEST-001", Some("shop")),
            of("TEST-002", Some("calc")),
            of("TEST-003", None),
            of("TEST-004", Some("calc")),
            of("TEST-005", None),
        ];
        store.create_tasks(&coord, tasks).await.unwrap();

        assert_eq!(
            claim(store, &strict, filter("calc", true)).await,
            ["TEST-002", "TEST-004"]
        );
        assert_eq!(
            claim(store, &calc, filter("calc", false)).await,
            ["TEST-003", "TEST-005"]
        );
        // Twice empty: the second look may be answered by SQLite's memo.
        assert!(claim(store, &calc, filter("calc", false)).await.is_empty());
        assert!(claim(store, &calc, filter("calc", false)).await.is_empty());
        assert_eq!(claim(store, &any, None).await, ["TEST-001"]);
    }
}

#[tokio::test]
async fn a_task_made_ready_for_a_project_reaches_that_projects_next_claim_only() {
    for (store, _dir) in backends().await {
        let store = &*store;
        let (coord, _, _) = team(store, "qa").await;
        let calc = agent(store, coord.team_id, "qa", "calc-tester", Role::Tester).await;
        let shop = agent(store, coord.team_id, "qa", "shop-tester", Role::Tester).await;
        for who in [&calc, &shop] {
            for _ in 0..2 {
                assert!(claim(store, who, filter(&who.agent[..4], true))
                    .await
                    .is_empty());
            }
        }
        store
            .create_tasks(&coord, vec![of("TEST-001", Some("shop"))])
            .await
            .unwrap();
        assert!(claim(store, &calc, filter("calc", true)).await.is_empty());
        // Moved to the other project by a patch: now calc's, no longer shop's.
        let to_calc = TaskPatch {
            metadata: Some(json!({ "project": "calc" })),
            ..Default::default()
        };
        store
            .update_task(&coord, "TEST-001", to_calc, None)
            .await
            .unwrap();
        assert!(claim(store, &shop, filter("shop", true)).await.is_empty());
        assert_eq!(
            claim(store, &calc, filter("calc", true)).await,
            ["TEST-001"]
        );
        // Released by its holder: back for its project.
        store.release_task(&calc, "TEST-001").await.unwrap();
        assert!(claim(store, &shop, filter("shop", false)).await.is_empty());
        assert_eq!(
            claim(store, &calc, filter("calc", false)).await,
            ["TEST-001"]
        );
    }
}

#[tokio::test]
async fn a_project_that_is_not_a_name_is_refused_and_nothing_is_written() {
    for (store, _dir) in backends().await {
        let store = &*store;
        let (coord, _, _) = team(store, "qa").await;
        for bad in [json!(5), json!(""), json!("a\nb"), json!("x".repeat(201))] {
            let t = NewTask {
                metadata: Some(json!({ "project": bad })),
                ..task("TEST-001", &[])
            };
            let err = store.create_tasks(&coord, vec![t]).await.unwrap_err();
            assert!(
                matches!(&err, StoreError::Invalid { field, .. } if field == "metadata.project"),
                "{err:?}"
            );
        }
        assert!(store.get_task(coord.team_id, "TEST-001").await.is_err());
        store
            .create_tasks(&coord, vec![of("TEST-001", Some("calc"))])
            .await
            .unwrap();
        let bad = TaskPatch {
            metadata: Some(json!({ "project": ["calc"] })),
            ..Default::default()
        };
        let err = store
            .update_task(&coord, "TEST-001", bad, None)
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::Invalid { .. }), "{err:?}");
        let kept = store.get_task(coord.team_id, "TEST-001").await.unwrap();
        assert_eq!(kept.metadata["project"], "calc");
    }
}
