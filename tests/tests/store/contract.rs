//! The store's task behaviour, pinned against the `Store` trait rather than SQLite: ids,
//! batches, claims, versions, holders, leases (dependencies are in `dependencies.rs`). Every
//! backend runs the same cases through `huddle_tests::store::backends()`.

use huddle_daemon::store::StoreError;
use huddle_sdk::wire::{NewTask, Role, TaskPatch, TaskStatus};
use huddle_tests::store::{agent, backends, prefixes, task, team};
use std::collections::HashSet;

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
        // Found by the insert itself, a taken number still refuses the whole batch.
        let dup = store
            .create_tasks(&coord, vec![task("TEST-030", &[]), task("TEST-01", &[])])
            .await;
        assert!(
            matches!(&dup, Err(StoreError::Conflict { details, .. }) if details["id"] == "TEST-01"),
            "{dup:?}"
        );
        assert!(matches!(
            store.get_task(coord.team_id, "TEST-030").await,
            Err(StoreError::NotFound { .. })
        ));
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

/// A claim whose token was checked before the agent was revoked (a request in the same write
/// batch as the revocation, a claim parked while it waited, a replica that has not heard yet)
/// takes nothing: the revocation binds in the store, not only in the token cache.
#[tokio::test]
async fn a_claim_checked_before_its_agent_was_revoked_takes_nothing() {
    for (store, _dir) in backends().await {
        let (coord, tester, _) = team(&*store, "qa").await;
        store
            .create_tasks(&coord, vec![task("TEST-001", &[])])
            .await
            .unwrap();
        store
            .set_agent_token(coord.team_id, &tester.agent, None)
            .await
            .unwrap();
        let claimed = store
            .claim_task(&tester, prefixes("TEST"), 60_000)
            .await
            .unwrap();
        assert!(claimed.is_none(), "{claimed:?}");
        let stored = store.get_task(coord.team_id, "TEST-001").await.unwrap();
        assert_eq!(
            (stored.status, stored.claimed_by),
            (TaskStatus::Pending, None)
        );
        // Another tester still takes it.
        let other = agent(&*store, coord.team_id, "qa", "tester-2", Role::Tester).await;
        let taken = store
            .claim_task(&other, prefixes("TEST"), 60_000)
            .await
            .unwrap()
            .expect("the task is still claimable");
        assert_eq!(taken.claimed_by.as_deref(), Some("tester-2"));
    }
}

#[tokio::test]
async fn a_heartbeat_answers_the_task_as_stored_with_its_edges() {
    for (store, _dir) in backends().await {
        let (coord, tester, _) = team(&*store, "qa").await;
        store
            .create_tasks(
                &coord,
                vec![task("TEST-001", &[]), task("TEST-002", &["TEST-001"])],
            )
            .await
            .unwrap();
        let claimed = store
            .claim_task(&tester, prefixes("TEST"), 60_000)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(claimed.id, "TEST-001");
        let beat = store.heartbeat(&tester, "TEST-001", 600_000).await.unwrap();
        assert_eq!(beat.version, claimed.version + 1);
        assert!(beat.lease_expires_at > claimed.lease_expires_at);
        assert_eq!(beat.blocks, vec!["TEST-002".to_string()]);
        let stored = store.get_task(coord.team_id, "TEST-001").await.unwrap();
        assert_eq!(
            serde_json::to_value(&beat).unwrap(),
            serde_json::to_value(&stored).unwrap()
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
            store
                .fail_task(&other, "TEST-001", "no".into(), false, None)
                .await,
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
            .fail_task(&coord, "TEST-002", "obsolete".into(), true, None)
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
