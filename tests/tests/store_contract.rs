//! The store's behaviour, pinned against the `Store` trait rather than SQLite. Every backend
//! runs the same cases through `backends()`.

use huddle_daemon::hub::Hub;
use huddle_daemon::store::sqlite::{SqliteOptions, SqliteStore, Synchronous};
use huddle_daemon::store::{Caller, MessageFilter, Store, StoreError, TaskFilter};
use huddle_sdk::wire::{NewTask, PostMessage, Role, TaskPatch, TaskStatus};
use serde_json::json;
use std::collections::HashSet;
use std::sync::Arc;

/// One fresh store per backend; the temp dir lives as long as the store.
fn backends() -> Vec<(Arc<dyn Store>, tempfile::TempDir)> {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(
        SqliteOptions {
            path: dir.path().join("huddle.db"),
            synchronous: Synchronous::Full,
            read_connections: 2,
            max_batch: 64,
            default_max_attempts: 2,
            memory_max_bytes: 4096,
            memory_history_limit: 3,
            limits: huddle_daemon::validate::Limits::default(),
        },
        Arc::new(Hub::new(64)),
    )
    .unwrap();
    vec![(Arc::new(store) as Arc<dyn Store>, dir)]
}

async fn agent(store: &dyn Store, team_id: i64, team: &str, name: &str, role: Role) -> Caller {
    store
        .create_agent(team_id, name, role, &format!("hash-{team}-{name}"))
        .await
        .unwrap();
    Caller {
        team_id,
        team: team.into(),
        agent: name.into(),
        role,
    }
}

/// A team with a coordinator, a tester and an executor.
async fn team(store: &dyn Store, name: &str) -> (Caller, Caller, Caller) {
    store.create_team(name).await.unwrap();
    let id = store.team_id(name).await.unwrap();
    (
        agent(store, id, name, "coordinator", Role::Coordinator).await,
        agent(store, id, name, "tester", Role::Tester).await,
        agent(store, id, name, "executor", Role::Executor).await,
    )
}

fn task(id: &str, blocked_by: &[&str]) -> NewTask {
    NewTask {
        id: Some(id.into()),
        subject: format!("do {id}"),
        blocked_by: blocked_by.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

fn prefixes(p: &str) -> Vec<String> {
    vec![p.to_string()]
}

#[tokio::test]
async fn tokens_resolve_to_their_agent_and_team() {
    for (store, _dir) in backends() {
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
    for (store, _dir) in backends() {
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
    for (store, _dir) in backends() {
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
    for (store, _dir) in backends() {
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
    for (store, _dir) in backends() {
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
    for (store, _dir) in backends() {
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
    for (store, _dir) in backends() {
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
    for (store, _dir) in backends() {
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

#[tokio::test]
async fn posts_are_idempotent_and_inboxes_keep_a_cursor() {
    for (store, _dir) in backends() {
        let (coord, tester, executor) = team(&*store, "qa").await;
        let post = |to: &str| PostMessage {
            to: to.into(),
            kind: "test_result".into(),
            summary: "ok".into(),
            data: json!({"passRate": 100}),
        };
        let first = store
            .post_message(&tester, post("coordinator"), Some("k1".into()))
            .await
            .unwrap();
        let again = store
            .post_message(&tester, post("coordinator"), Some("k1".into()))
            .await
            .unwrap();
        assert!(!first.replayed && again.replayed);
        assert_eq!(first.message, again.message);
        store.post_message(&tester, post("*"), None).await.unwrap();
        store
            .post_message(&tester, post("executor"), None)
            .await
            .unwrap();
        assert!(matches!(
            store.post_message(&tester, post("ghost"), None).await,
            Err(StoreError::Invalid { .. })
        ));
        let all = store
            .list_messages(
                coord.team_id,
                MessageFilter {
                    limit: 100,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(all.iter().map(|m| m.seq).collect::<Vec<_>>(), [1, 2, 3]);

        let inbox = store.inbox(&coord, 100).await.unwrap();
        assert_eq!(inbox.iter().map(|m| m.seq).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(
            store.inbox(&coord, 100).await.unwrap().len(),
            2,
            "reading does not acknowledge"
        );
        assert_eq!(store.ack_inbox(&coord, 1).await.unwrap(), 1);
        assert_eq!(
            store
                .inbox(&coord, 100)
                .await
                .unwrap()
                .iter()
                .map(|m| m.seq)
                .collect::<Vec<_>>(),
            [2]
        );
        assert_eq!(
            store.ack_inbox(&coord, 0).await.unwrap(),
            1,
            "the cursor never moves back"
        );
        assert_eq!(
            store
                .inbox(&executor, 100)
                .await
                .unwrap()
                .iter()
                .map(|m| m.seq)
                .collect::<Vec<_>>(),
            [2, 3]
        );
        assert!(
            store.inbox(&tester, 100).await.unwrap().is_empty(),
            "own posts are not in the inbox"
        );
    }
}

#[tokio::test]
async fn memory_merges_replaces_checks_versions_caps_size_and_keeps_bounded_history() {
    for (store, _dir) in backends() {
        let (coord, tester, _) = team(&*store, "qa").await;
        let m = store
            .patch_memory(
                &coord,
                json!({"test_strategy": {"test_framework": "pytest", "x": 1}}),
                None,
            )
            .await
            .unwrap();
        assert_eq!(m.version, 1);
        let m = store
            .patch_memory(&tester, json!({"test_strategy": {"x": null}}), Some(1))
            .await
            .unwrap();
        assert_eq!(
            m.doc,
            json!({"test_strategy": {"test_framework": "pytest"}})
        );
        assert!(matches!(
            store.patch_memory(&tester, json!({}), Some(1)).await,
            Err(StoreError::StaleVersion { current: 2, .. })
        ));
        let big = "x".repeat(5000);
        assert!(matches!(
            store
                .patch_memory(&tester, json!({ "big": big }), None)
                .await,
            Err(StoreError::TooLarge { .. })
        ));
        let m = store
            .replace_memory(&coord, json!({"fresh": true}), Some(2))
            .await
            .unwrap();
        assert_eq!((m.version, m.doc), (3, json!({"fresh": true})));
        store
            .patch_memory(&coord, json!({"a": 1}), None)
            .await
            .unwrap();
        let history = store.memory_history(coord.team_id, 100).await.unwrap();
        assert_eq!(
            history.iter().map(|h| h.version).collect::<Vec<_>>(),
            [4, 3, 2],
            "history keeps the last 3"
        );
        assert_eq!(history[2].agent, "tester");
        assert_eq!(store.get_memory(coord.team_id).await.unwrap().version, 4);
    }
}

#[tokio::test]
async fn every_change_appends_an_event_in_sequence() {
    for (store, _dir) in backends() {
        let (coord, tester, _) = team(&*store, "qa").await;
        store
            .create_tasks(&coord, vec![task("TEST-001", &[])])
            .await
            .unwrap();
        store
            .claim_task(&tester, prefixes("TEST"), 60_000)
            .await
            .unwrap();
        store
            .complete_task(&tester, "TEST-001", None)
            .await
            .unwrap();
        store
            .patch_memory(&coord, json!({"a": 1}), None)
            .await
            .unwrap();
        let events = store.list_events(coord.team_id, 0, 100).await.unwrap();
        let kinds: Vec<_> = events.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "agent.created",
                "agent.created",
                "agent.created",
                "task.created",
                "task.claimed",
                "task.completed",
                "memory.updated"
            ]
        );
        assert!(events.windows(2).all(|w| w[1].seq == w[0].seq + 1));
    }
}

#[tokio::test]
async fn teams_are_isolated() {
    for (store, _dir) in backends() {
        let (a, _, _) = team(&*store, "alpha").await;
        let (b, _, _) = team(&*store, "beta").await;
        store
            .create_tasks(&a, vec![task("TEST-001", &[])])
            .await
            .unwrap();
        assert!(matches!(
            store.get_task(b.team_id, "TEST-001").await,
            Err(StoreError::NotFound { .. })
        ));
        assert!(store
            .claim_task(&b, prefixes("TEST"), 1000)
            .await
            .unwrap()
            .is_none());
        // The same id may exist in both teams.
        store
            .create_tasks(&b, vec![task("TEST-001", &[])])
            .await
            .unwrap();
    }
}
