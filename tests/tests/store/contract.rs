//! The store's task behaviour, pinned against the `Store` trait rather than SQLite: ids,
//! batches, claims, dependencies, versions, holders, leases. Every backend runs the same cases
//! through `huddle_tests::store::backends()`.

use huddle_daemon::store::{Store, StoreError, TaskFilter};
use huddle_sdk::wire::{NewTask, Role, TaskPatch, TaskStatus};
use huddle_tests::store::{agent, backends, prefixes, task, team};
use serde_json::json;
use std::collections::HashSet;
use std::sync::Arc;

#[tokio::test]
async fn tokens_resolve_to_their_agent_and_team() {
    for (store, _dir) in backends().await {
        let (coord, _, _) = team(&*store, "qa").await;
        let found = store.authenticate("hash-qa-coordinator").await.unwrap();
        assert_eq!(found, Some(coord));
        assert_eq!(store.authenticate("nope").await.unwrap(), None);
        assert!(matches!(
            store.create_team("qa").await,
            Err(StoreError::Conflict {
                code: "duplicate_team",
                ..
            })
        ));
        let agents = store
            .list_agents(store.team_id("qa").await.unwrap())
            .await
            .unwrap();
        assert_eq!(
            agents.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
            ["coordinator", "executor", "tester"]
        );
    }
}

#[tokio::test]
async fn prefixes_number_tasks_and_batches_are_all_or_none() {
    for (store, _dir) in backends().await {
        let (coord, _, _) = team(&*store, "qa").await;
        let auto = |p: &str| NewTask {
            prefix: Some(p.into()),
            subject: "x".into(),
            ..Default::default()
        };
        let made = store
            .create_tasks(&coord, vec![auto("TEST"), auto("TEST"), auto("QARUN")])
            .await
            .unwrap();
        assert_eq!(
            made.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
            ["TEST-001", "TEST-002", "QARUN-001"]
        );
        // An explicit id moves the counter past it.
        store
            .create_tasks(&coord, vec![task("TEST-010", &[])])
            .await
            .unwrap();
        assert_eq!(
            store
                .create_tasks(&coord, vec![auto("TEST")])
                .await
                .unwrap()[0]
                .id,
            "TEST-011"
        );
        // The second task names an unknown blocker, so the first must not exist either.
        let err = store
            .create_tasks(
                &coord,
                vec![task("TEST-020", &[]), task("TEST-021", &["TEST-999"])],
            )
            .await;
        assert!(matches!(err, Err(StoreError::Invalid { .. })), "{err:?}");
        assert!(matches!(
            store.get_task(coord.team_id, "TEST-020").await,
            Err(StoreError::NotFound { .. })
        ));
        let dup = store.create_tasks(&coord, vec![task("TEST-1", &[])]).await;
        assert!(
            matches!(
                dup,
                Err(StoreError::Conflict {
                    code: "duplicate_id",
                    ..
                })
            ),
            "TEST-1 is TEST-001: {dup:?}"
        );
    }
}

#[tokio::test]
async fn claims_are_exclusive_under_concurrency() {
    for (store, _dir) in backends().await {
        let (coord, _, _) = team(&*store, "qa").await;
        let tasks: Vec<NewTask> = (1..=200)
            .map(|i| task(&format!("TEST-{i:03}"), &[]))
            .collect();
        store.create_tasks(&coord, tasks).await.unwrap();
        let mut workers = Vec::new();
        for w in 0..8 {
            let store = store.clone();
            let me = agent(&*store, coord.team_id, "qa", &format!("w{w}"), Role::Tester).await;
            workers.push(tokio::spawn(async move {
                let mut got = Vec::new();
                while let Some(t) = store
                    .claim_task(&me, prefixes("TEST"), 60_000)
                    .await
                    .unwrap()
                {
                    assert_eq!(t.claimed_by.as_deref(), Some(me.agent.as_str()));
                    got.push(t.id);
                }
                got
            }));
        }
        let mut all = Vec::new();
        for w in workers {
            all.extend(w.await.unwrap());
        }
        let unique: HashSet<_> = all.iter().collect();
        assert_eq!(all.len(), 200);
        assert_eq!(unique.len(), 200);
    }
}

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

#[tokio::test]
async fn stale_versions_are_refused() {
    for (store, _dir) in backends().await {
        let (coord, _, _) = team(&*store, "qa").await;
        let t = store
            .create_tasks(&coord, vec![task("TEST-001", &[])])
            .await
            .unwrap()
            .remove(0);
        let patch = || TaskPatch {
            subject: Some("renamed".into()),
            ..Default::default()
        };
        let t2 = store
            .update_task(&coord, "TEST-001", patch(), Some(t.version))
            .await
            .unwrap();
        assert_eq!(t2.version, t.version + 1);
        let stale = store
            .update_task(&coord, "TEST-001", patch(), Some(t.version))
            .await;
        assert!(
            matches!(stale, Err(StoreError::StaleVersion { current, .. }) if current == t2.version)
        );
    }
}

#[tokio::test]
async fn only_the_holder_or_a_coordinator_acts_on_a_claim() {
    for (store, _dir) in backends().await {
        let (coord, tester, _) = team(&*store, "qa").await;
        let other = agent(&*store, coord.team_id, "qa", "tester-2", Role::Tester).await;
        store
            .create_tasks(&coord, vec![task("TEST-001", &[]), task("TEST-002", &[])])
            .await
            .unwrap();
        store
            .claim_task(&tester, prefixes("TEST"), 60_000)
            .await
            .unwrap()
            .unwrap();
        for result in [
            store.complete_task(&other, "TEST-001", None).await,
            store.fail_task(&other, "TEST-001", "no".into()).await,
            store.release_task(&other, "TEST-001").await,
            store.heartbeat(&other, "TEST-001", 1000).await,
        ] {
            assert!(
                matches!(
                    result,
                    Err(StoreError::Conflict {
                        code: "not_holder",
                        ..
                    })
                ),
                "{result:?}"
            );
        }
        let released = store.release_task(&coord, "TEST-001").await.unwrap();
        assert_eq!(
            (released.status, released.claimed_by),
            (TaskStatus::Pending, None)
        );
        let failed = store
            .fail_task(&coord, "TEST-002", "obsolete".into())
            .await
            .unwrap();
        assert_eq!(failed.failure_reason.as_deref(), Some("obsolete"));
        assert!(matches!(
            store.complete_task(&coord, "TEST-002", None).await,
            Err(StoreError::Conflict {
                code: "task_closed",
                ..
            })
        ));
    }
}

#[tokio::test]
async fn expired_leases_return_tasks_and_fail_them_past_max_attempts() {
    for (store, _dir) in backends().await {
        let (coord, tester, _) = team(&*store, "qa").await;
        store
            .create_tasks(&coord, vec![task("TEST-001", &[])])
            .await
            .unwrap();
        // default_max_attempts is 2 for these stores.
        for round in 1..=2 {
            store
                .claim_task(&tester, prefixes("TEST"), 1)
                .await
                .unwrap()
                .expect("claimable");
            huddle_tests::eventually(10, "lease expiry", || {
                let store = store.clone();
                async move { store.expire_leases().await.unwrap() > 0 }
            })
            .await;
            let t = store.get_task(coord.team_id, "TEST-001").await.unwrap();
            assert_eq!(t.attempts, round);
            let want = if round == 1 {
                TaskStatus::Pending
            } else {
                TaskStatus::Failed
            };
            assert_eq!(t.status, want);
        }
        let t = store.get_task(coord.team_id, "TEST-001").await.unwrap();
        assert!(t.failure_reason.unwrap().contains("2 of 2 attempts"));
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
