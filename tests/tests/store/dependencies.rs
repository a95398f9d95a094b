//! Dependencies between stored tasks: completing a blocker readies its dependents, and a
//! patch's new blockers are checked in order, refused whole when one closes a cycle.

use huddle_daemon::store::{Store, StoreError, TaskFilter};
use huddle_sdk::wire::{TaskPatch, TaskStatus};
use huddle_tests::store::{backends, prefixes, task, team};
use serde_json::json;
use std::sync::Arc;

#[tokio::test]
async fn completing_a_blocker_readies_its_dependents_in_the_same_step() {
    for (store, _dir) in backends().await {
        let (coord, tester, _) = team(&*store, "qa").await;
        store
            .create_tasks(
                &coord,
                vec![task("TEST-001", &[]), task("TEST-002", &["TEST-001"])],
            )
            .await
            .unwrap();
        let ready = |s: Arc<dyn Store>| async move {
            let page = s
                .list_tasks(
                    1,
                    TaskFilter {
                        ready: true,
                        limit: 100,
                        ..Default::default()
                    },
                )
                .await
                .unwrap();
            page.items.into_iter().map(|t| t.id).collect::<Vec<_>>()
        };
        assert_eq!(ready(store.clone()).await, ["TEST-001"]);
        let t = store
            .claim_task(&tester, prefixes("TEST"), 60_000)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(t.blocks, ["TEST-002"]);
        assert!(store
            .claim_task(&tester, prefixes("TEST"), 60_000)
            .await
            .unwrap()
            .is_none());
        store
            .complete_task(&tester, "TEST-001", Some(json!({"passed": 3})))
            .await
            .unwrap();
        assert_eq!(ready(store.clone()).await, ["TEST-002"]);
        // Reopening the blocker blocks the dependent again.
        let reopen = TaskPatch {
            status: Some(TaskStatus::Pending),
            ..Default::default()
        };
        store
            .update_task(&coord, "TEST-001", reopen, None)
            .await
            .unwrap();
        assert_eq!(ready(store.clone()).await, ["TEST-001"]);
    }
}

#[tokio::test]
async fn a_blocker_that_closes_a_cycle_is_refused_and_named() {
    for (store, _dir) in backends().await {
        let (coord, _, _) = team(&*store, "qa").await;
        store
            .create_tasks(
                &coord,
                vec![
                    task("TEST-001", &[]),
                    task("TEST-002", &["TEST-001"]),
                    task("TEST-003", &["TEST-002"]),
                ],
            )
            .await
            .unwrap();
        let patch = TaskPatch {
            add_blocked_by: vec!["TEST-003".into()],
            ..Default::default()
        };
        match store.update_task(&coord, "TEST-001", patch, None).await {
            Err(StoreError::Conflict {
                code: "dependency_cycle",
                details,
                ..
            }) => {
                assert_eq!(
                    details["cycle"],
                    json!(["TEST-001", "TEST-003", "TEST-002", "TEST-001"])
                );
            }
            other => panic!("expected a cycle, got {other:?}"),
        }
        assert!(store
            .get_task(coord.team_id, "TEST-001")
            .await
            .unwrap()
            .blocked_by
            .is_empty());
    }
}

/// A patch adding several blockers at once: checked in the order given (the first bad one is
/// the error, and nothing is added), duplicates and completed blockers counted right.
#[tokio::test]
async fn a_patch_adds_its_blockers_in_order_all_or_none() {
    fn add(ids: &[&str]) -> TaskPatch {
        TaskPatch {
            add_blocked_by: ids.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }
    for (store, _dir) in backends().await {
        let (coord, tester, _) = team(&*store, "qa").await;
        store
            .create_tasks(
                &coord,
                vec![
                    task("TEST-001", &[]),
                    task("TEST-002", &["TEST-001"]),
                    task("DONE-001", &[]),
                    task("QARUN-001", &[]),
                ],
            )
            .await
            .unwrap();
        let done = store
            .claim_task(&tester, prefixes("DONE"), 60_000)
            .await
            .unwrap()
            .unwrap();
        store.complete_task(&tester, &done.id, None).await.unwrap();
        // An unknown blocker before a cycle is the error, and the other way round.
        let unknown = store
            .update_task(&coord, "TEST-001", add(&["TEST-404", "TEST-002"]), None)
            .await;
        assert!(
            matches!(&unknown, Err(StoreError::Invalid { details, .. }) if details["unknownTask"] == "TEST-404"),
            "{unknown:?}"
        );
        match store
            .update_task(
                &coord,
                "TEST-001",
                add(&["DONE-001", "TEST-002", "TEST-404"]),
                None,
            )
            .await
        {
            Err(StoreError::Conflict {
                code: "dependency_cycle",
                details,
                ..
            }) => assert_eq!(
                details["cycle"],
                json!(["TEST-001", "TEST-002", "TEST-001"])
            ),
            other => panic!("expected the cycle through TEST-002, got {other:?}"),
        }
        let selfish = store
            .update_task(&coord, "TEST-001", add(&["DONE-001", "TEST-001"]), None)
            .await;
        assert!(
            matches!(&selfish, Err(StoreError::Invalid { .. })),
            "{selfish:?}"
        );
        let untouched = store.get_task(coord.team_id, "TEST-001").await.unwrap();
        assert!(
            untouched.blocked_by.is_empty(),
            "a refused patch adds nothing"
        );
        // Duplicates count once, a completed blocker not at all: one open blocker.
        let patched = store
            .update_task(
                &coord,
                "QARUN-001",
                add(&["TEST-002", "DONE-001", "TEST-002"]),
                None,
            )
            .await
            .unwrap();
        assert_eq!(patched.blocked_by, vec!["DONE-001", "TEST-002"]);
        assert!(store
            .claim_task(&tester, prefixes("QARUN"), 60_000)
            .await
            .unwrap()
            .is_none());
        for id in ["TEST-001", "TEST-002"] {
            let t = store
                .claim_task(&tester, prefixes("TEST"), 60_000)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(t.id, id);
            store.complete_task(&tester, id, None).await.unwrap();
        }
        let ready = store
            .claim_task(&tester, prefixes("QARUN"), 60_000)
            .await
            .unwrap();
        assert_eq!(ready.map(|t| t.id), Some("QARUN-001".to_string()));
    }
}
