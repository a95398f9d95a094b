//! Retention (`Store::prune`) on every backend: it deletes what the policy no longer keeps —
//! old finished tasks no unfinished task waits on, the oldest messages past the count with
//! their idempotency keys, the oldest events, old test runs — in batches, and nothing else.

use huddle_daemon::store::retention::{Pruned, RetentionPolicy};
use huddle_daemon::store::{MessageFilter, StoreError, TaskFilter};
use huddle_sdk::wire::{NewTestRun, PostMessage, TestOutcome, TestResultRecord};
use huddle_tests::store::{backends, prefixes, task, team};
use serde_json::json;

fn post(summary: &str) -> PostMessage {
    PostMessage {
        to: "*".into(),
        kind: "impl_progress".into(),
        summary: summary.into(),
        data: json!({}),
    }
}

fn run(tree: &str) -> NewTestRun {
    NewTestRun {
        project: "calc".into(),
        tree: tree.into(),
        started_at: None,
        outcomes: vec![TestResultRecord {
            nodeid: "a".into(),
            outcome: TestOutcome::Passed,
        }],
    }
}

#[tokio::test]
async fn retention_deletes_what_the_policy_no_longer_keeps_in_batches_and_nothing_else() {
    for (store, _dir) in backends().await {
        let (coord, tester, _) = team(&*store, "qa").await;
        let (other, _, _) = team(&*store, "dev").await;
        // TEST-002 waits on TEST-001; TEST-004 has no dependent; TEST-003 stays pending and
        // TEST-005 in progress.
        store
            .create_tasks(
                &coord,
                vec![
                    task("TEST-001", &[]),
                    task("TEST-002", &["TEST-001"]),
                    task("TEST-003", &[]),
                    task("TEST-004", &[]),
                    task("TEST-005", &[]),
                ],
            )
            .await
            .unwrap();
        for id in ["TEST-001", "TEST-004"] {
            store
                .complete_task(&coord, id, Some(json!({"ok": true})))
                .await
                .unwrap();
        }
        let held = store
            .claim_task(&tester, prefixes("TEST"), 60_000)
            .await
            .unwrap()
            .expect("a ready task");
        store
            .create_tasks(&other, vec![task("TEST-001", &[])])
            .await
            .unwrap();
        store.complete_task(&other, "TEST-001", None).await.unwrap();
        for n in 1..=6 {
            let key = match n {
                1 => Some("k-old".to_string()),
                6 => Some("k-new".to_string()),
                _ => None,
            };
            store
                .post_message(&tester, post(&format!("m{n}")), key)
                .await
                .unwrap();
        }
        for n in 1..=2 {
            store
                .post_message(&other, post(&format!("d{n}")), None)
                .await
                .unwrap();
        }
        for tree in ["t1", "t2"] {
            store.record_test_run(&tester, run(tree)).await.unwrap();
        }
        let events_before = store.list_events(coord.team_id, 0, 1000).await.unwrap();
        let last_event = events_before.last().unwrap().seq;

        let policy = RetentionPolicy {
            finished_tasks_max_age_ms: Some(0),
            messages_per_team: Some(2),
            events_per_team: Some(3),
            test_runs_max_age_ms: Some(0),
            batch: 2,
            ..RetentionPolicy::default()
        };
        let first = store.prune(&policy).await.unwrap();
        assert_eq!(
            first.messages, 2,
            "a batch is at most 2 per team: {first:?}"
        );
        assert_eq!(first.test_runs, 2, "{first:?}");
        let mut total = first;
        loop {
            let more: Pruned = store.prune(&policy).await.unwrap();
            total.tasks += more.tasks;
            total.messages += more.messages;
            total.events += more.events;
            if more.total() == 0 {
                break;
            }
        }
        assert_eq!(total.messages, 4, "{total:?}");

        // Tasks: the completed one nobody waits on went, in both teams; the rest stayed.
        let ids = |team_id| {
            let store = store.clone();
            async move {
                let filter = TaskFilter {
                    limit: 100,
                    ..Default::default()
                };
                let page = store.list_tasks(team_id, filter).await.unwrap();
                page.items.into_iter().map(|t| t.id).collect::<Vec<_>>()
            }
        };
        let mut left = ids(coord.team_id).await;
        left.sort();
        assert_eq!(left, ["TEST-001", "TEST-002", "TEST-003", "TEST-005"]);
        assert!(ids(other.team_id).await.is_empty());
        assert!(matches!(
            store.get_task(coord.team_id, "TEST-004").await,
            Err(StoreError::NotFound { .. })
        ));
        let still_held = store.get_task(coord.team_id, &held.id).await.unwrap();
        assert_eq!(still_held.claimed_by.as_deref(), Some("tester"));

        // Messages: the newest two per team; the deleted ones' keys are gone, the kept one's
        // still answers a retry.
        let summaries = |team_id| {
            let store = store.clone();
            async move {
                let filter = MessageFilter {
                    limit: 100,
                    ..Default::default()
                };
                let all = store.list_messages(team_id, filter).await.unwrap();
                all.into_iter().map(|m| m.summary).collect::<Vec<_>>()
            }
        };
        assert_eq!(summaries(coord.team_id).await, ["m5", "m6"]);
        assert_eq!(summaries(other.team_id).await, ["d1", "d2"]);
        let replay = store
            .post_message(&tester, post("m6"), Some("k-new".into()))
            .await
            .unwrap();
        assert!(replay.replayed, "a kept message's key still answers");
        let fresh = store
            .post_message(&tester, post("m1 again"), Some("k-old".into()))
            .await
            .unwrap();
        assert!(!fresh.replayed, "a deleted message's key went with it");

        // Events: the newest three at pruning time, then what was written since.
        let events = store.list_events(coord.team_id, 0, 1000).await.unwrap();
        assert_eq!(events.first().unwrap().seq, last_event - 2, "{events:?}");
        // Test runs: all were older than 0 ms.
        assert!(store
            .test_runs(coord.team_id, "calc", false)
            .await
            .unwrap()
            .is_empty());

        // Nothing is deleted by an empty policy.
        let none = store
            .prune(&RetentionPolicy {
                batch: 100,
                ..RetentionPolicy::default()
            })
            .await
            .unwrap();
        assert_eq!(none, Pruned::default());
    }
}
