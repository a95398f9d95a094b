//! The store's message bus, shared memory, event log and team isolation, pinned against the
//! `Store` trait rather than SQLite. Every backend runs the same cases.

use huddle_daemon::store::{MessageFilter, StoreError};
use huddle_sdk::wire::PostMessage;
use huddle_tests::store::{backends, prefixes, task, team};
use serde_json::json;

#[tokio::test]
async fn posts_are_idempotent_and_inboxes_keep_a_cursor() {
    for (store, _dir) in backends().await {
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
            .unwrap()
            .items;
        assert_eq!(all.iter().map(|m| m.seq).collect::<Vec<_>>(), [1, 2, 3]);

        let inbox = store.inbox(&coord, 100, usize::MAX).await.unwrap().items;
        assert_eq!(inbox.iter().map(|m| m.seq).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(
            store
                .inbox(&coord, 100, usize::MAX)
                .await
                .unwrap()
                .items
                .len(),
            2,
            "reading does not acknowledge"
        );
        assert_eq!(store.ack_inbox(&coord, 1).await.unwrap(), 1);
        assert_eq!(
            store
                .inbox(&coord, 100, usize::MAX)
                .await
                .unwrap()
                .items
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
                .inbox(&executor, 100, usize::MAX)
                .await
                .unwrap()
                .items
                .iter()
                .map(|m| m.seq)
                .collect::<Vec<_>>(),
            [2, 3]
        );
        assert!(
            store
                .inbox(&tester, 100, usize::MAX)
                .await
                .unwrap()
                .items
                .is_empty(),
            "own posts are not in the inbox"
        );
    }
}

#[tokio::test]
async fn memory_merges_replaces_checks_versions_caps_size_and_keeps_bounded_history() {
    for (store, _dir) in backends().await {
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
        let history = store
            .memory_history(coord.team_id, None, 100, usize::MAX)
            .await
            .unwrap()
            .items;
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
    for (store, _dir) in backends().await {
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
    for (store, _dir) in backends().await {
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
