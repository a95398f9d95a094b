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
        tier: None,
        task: None,
        artifacts: None,
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
                let all = store.list_messages(team_id, filter).await.unwrap().items;
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

/// The summaries of the team's stored messages, oldest first.
async fn stored_summaries(store: &dyn huddle_daemon::store::Store, team_id: i64) -> Vec<String> {
    let filter = MessageFilter {
        limit: 100,
        ..Default::default()
    };
    let all = store.list_messages(team_id, filter).await.unwrap().items;
    all.into_iter().map(|m| m.summary).collect()
}

#[tokio::test]
async fn count_limits_keep_the_newest_finished_tasks_and_test_runs_per_team() {
    for (store, _dir) in backends().await {
        let (coord, tester, _) = team(&*store, "qa").await;
        let tasks: Vec<_> = (1..=5)
            .map(|n| task(&format!("TEST-{n:03}"), &[]))
            .collect();
        store.create_tasks(&coord, tasks).await.unwrap();
        // Finished in order 1..4 (updated_at rises); TEST-005 stays pending.
        for n in 1..=4 {
            store
                .complete_task(&coord, &format!("TEST-{n:03}"), None)
                .await
                .unwrap();
        }
        for tree in ["t1", "t2", "t3"] {
            store.record_test_run(&tester, run(tree)).await.unwrap();
        }
        let policy = RetentionPolicy {
            finished_tasks_per_team: Some(2),
            test_runs_per_team: Some(1),
            batch: 100,
            ..RetentionPolicy::default()
        };
        let pruned = store.prune(&policy).await.unwrap();
        assert_eq!((pruned.tasks, pruned.test_runs), (2, 2), "{pruned:?}");
        let filter = TaskFilter {
            limit: 100,
            ..Default::default()
        };
        let mut left: Vec<_> = store
            .list_tasks(coord.team_id, filter)
            .await
            .unwrap()
            .items
            .into_iter()
            .map(|t| t.id)
            .collect();
        left.sort();
        assert_eq!(left, ["TEST-003", "TEST-004", "TEST-005"]);
        let runs = store.test_runs(coord.team_id, "calc", false).await.unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].summary.tree, "t3", "the newest run is kept");
        assert_eq!(store.prune(&policy).await.unwrap(), Pruned::default());
    }
}

#[tokio::test]
async fn a_teams_own_retention_replaces_the_default_for_that_team_only() {
    use huddle_sdk::wire::{TeamRetention, TeamSettings};
    for (store, _dir) in backends().await {
        let (qa, qa_tester, _) = team(&*store, "qa").await;
        let (dev, dev_tester, _) = team(&*store, "dev").await;
        for n in 1..=4 {
            for tester in [&qa_tester, &dev_tester] {
                store
                    .post_message(tester, post(&format!("m{n}")), None)
                    .await
                    .unwrap();
            }
        }
        let keep_one = TeamSettings {
            retention: TeamRetention {
                messages_kept: Some(1),
                ..TeamRetention::default()
            },
            ..TeamSettings::default()
        };
        store.set_team_settings(qa.team_id, keep_one).await.unwrap();
        let overrides = store.retention_overrides().await.unwrap();
        assert_eq!(overrides.len(), 1);
        let mut policy = RetentionPolicy {
            messages_per_team: Some(3),
            batch: 100,
            ..RetentionPolicy::default()
        };
        policy.per_team = overrides.into_iter().collect();
        store.prune(&policy).await.unwrap();
        assert_eq!(stored_summaries(&*store, qa.team_id).await, ["m4"]);
        assert_eq!(
            stored_summaries(&*store, dev.team_id).await,
            ["m2", "m3", "m4"]
        );

        // `0` in a team's settings keeps everything of that kind for it.
        let keep_all = TeamSettings {
            retention: TeamRetention {
                messages_kept: Some(0),
                ..TeamRetention::default()
            },
            ..TeamSettings::default()
        };
        store
            .set_team_settings(dev.team_id, keep_all)
            .await
            .unwrap();
        policy.per_team = store
            .retention_overrides()
            .await
            .unwrap()
            .into_iter()
            .collect();
        policy.messages_per_team = Some(1);
        store.prune(&policy).await.unwrap();
        assert_eq!(
            stored_summaries(&*store, dev.team_id).await,
            ["m2", "m3", "m4"]
        );
    }
}

#[tokio::test]
async fn retention_keeps_the_messages_and_events_a_lagging_webhook_has_not_handled() {
    use huddle_daemon::store::webhooks::Progress;
    use huddle_sdk::wire::WebhookTrigger;
    for (store, _dir) in backends().await {
        let (coord, tester, _) = team(&*store, "qa").await;
        for n in 1..=3 {
            store
                .post_message(&tester, post(&format!("m{n}")), None)
                .await
                .unwrap();
        }
        // Registered now: it has handled everything so far (its cursors start at the newest).
        let hook = store
            .create_webhook(
                &coord,
                "https://example.com/hook",
                &[WebhookTrigger::FixRequired],
                "secret-0123456789",
                10,
            )
            .await
            .unwrap();
        let start = store.cursors(coord.team_id).await.unwrap();
        for n in 4..=6 {
            store
                .post_message(&tester, post(&format!("m{n}")), None)
                .await
                .unwrap();
        }
        let policy = RetentionPolicy {
            messages_per_team: Some(1),
            events_per_team: Some(1),
            batch: 100,
            ..RetentionPolicy::default()
        };
        while store.prune(&policy).await.unwrap().total() > 0 {}
        assert_eq!(
            stored_summaries(&*store, coord.team_id).await,
            ["m4", "m5", "m6"],
            "what the webhook has not handled stays"
        );
        let events = store.list_events(coord.team_id, 0, 1000).await.unwrap();
        assert_eq!(
            events.first().map(|e| e.seq),
            Some(start.events + 1),
            "events past the webhook's cursor stay"
        );

        // Once it has handled them, they go.
        let jobs = store.lease_webhooks("replica-a", 60_000).await.unwrap();
        assert!(jobs.iter().any(|j| j.id == hook.id));
        let now = store.cursors(coord.team_id).await.unwrap();
        let progress = Progress {
            cursors: (now.messages, now.events),
            deliveries: Vec::new(),
            keep: 10,
            lease_ms: 60_000,
        };
        assert!(store
            .advance_webhook(hook.id, "replica-a", progress)
            .await
            .unwrap());
        while store.prune(&policy).await.unwrap().total() > 0 {}
        assert_eq!(stored_summaries(&*store, coord.team_id).await, ["m6"]);
    }
}
