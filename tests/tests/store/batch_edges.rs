//! A batch of new tasks with `blockedBy` edges between them and to stored tasks: checked in
//! batch order, counted once per distinct open blocker, refused whole with the cycle named.

use huddle_daemon::store::StoreError;
use huddle_tests::store::{backends, prefixes, ready_ids, task, team};
use serde_json::json;

#[tokio::test]
async fn a_batch_counts_only_open_blockers_once_each() {
    for (store, _dir) in backends().await {
        let (coord, tester, _) = team(&*store, "qa").await;
        store
            .create_tasks(&coord, vec![task("OLD-001", &[]), task("OLD-002", &[])])
            .await
            .unwrap();
        store
            .claim_task(&tester, prefixes("OLD"), 60_000)
            .await
            .unwrap()
            .unwrap();
        store.complete_task(&tester, "OLD-001", None).await.unwrap();
        let made = store
            .create_tasks(
                &coord,
                vec![
                    // Only a completed blocker: ready at once.
                    task("NEW-001", &["OLD-001"]),
                    // A blocker named twice counts once; the completed one not at all.
                    task("NEW-002", &["OLD-002", "OLD-002", "OLD-001"]),
                    // Blocked by a task of the same batch.
                    task("NEW-003", &["NEW-001"]),
                ],
            )
            .await
            .unwrap();
        assert_eq!(made[1].blocked_by, ["OLD-001", "OLD-002"]);
        assert_eq!(made[0].blocks, ["NEW-003"]);
        assert_eq!(
            ready_ids(&*store, coord.team_id).await,
            ["NEW-001", "OLD-002"]
        );
        // One completion of OLD-002 readies NEW-002: its counter was 1, not 2.
        let old = store
            .claim_task(&tester, prefixes("OLD"), 60_000)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(old.id, "OLD-002");
        assert_eq!(old.blocks, ["NEW-002"]);
        store.complete_task(&tester, "OLD-002", None).await.unwrap();
        assert_eq!(
            ready_ids(&*store, coord.team_id).await,
            ["NEW-001", "NEW-002"]
        );
    }
}

#[tokio::test]
async fn a_cycle_within_a_batch_is_refused_whole_and_named_and_errors_come_in_batch_order() {
    for (store, _dir) in backends().await {
        let (coord, _, _) = team(&*store, "qa").await;
        store
            .create_tasks(&coord, vec![task("OLD-001", &[])])
            .await
            .unwrap();
        let refused = store
            .create_tasks(
                &coord,
                vec![
                    task("CYC-001", &["CYC-003", "OLD-001"]),
                    task("CYC-002", &["CYC-001"]),
                    task("CYC-003", &["CYC-002"]),
                ],
            )
            .await;
        match refused {
            Err(StoreError::Conflict {
                code: "dependency_cycle",
                details,
                ..
            }) => assert_eq!(
                details["cycle"],
                json!(["CYC-003", "CYC-002", "CYC-001", "CYC-003"])
            ),
            other => panic!("expected a cycle, got {other:?}"),
        }
        assert!(store.get_task(coord.team_id, "CYC-001").await.is_err());
        // An unknown blocker before the cycle is the error reported.
        let refused = store
            .create_tasks(
                &coord,
                vec![
                    task("CYC-001", &["CYC-002"]),
                    task("CYC-002", &["NOPE-001"]),
                    task("CYC-003", &["CYC-003"]),
                ],
            )
            .await;
        match refused {
            Err(StoreError::Invalid { field, details, .. }) => {
                assert_eq!(field, "[1].blockedBy");
                assert_eq!(details["unknownTask"], "NOPE-001");
            }
            other => panic!("expected an unknown blocker, got {other:?}"),
        }
        // A task of the batch that already exists is reported before a later bad task.
        let refused = store
            .create_tasks(
                &coord,
                vec![task("OLD-001", &[]), task("CYC-009", &["CYC-009"])],
            )
            .await;
        assert!(
            matches!(
                refused,
                Err(StoreError::Conflict {
                    code: "duplicate_id",
                    ..
                })
            ),
            "{refused:?}"
        );
    }
}
