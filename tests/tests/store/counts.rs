//! The maintained per-team counters (`QuotaStore::team_counters`, what `/metrics` reports):
//! kept by the database in every write's transaction, they equal a count of the rows after
//! creates, claims, completions, failures, blocker edits, posts, memory writes and retention,
//! on every backend — and after retention has deleted everything, every counter is back to
//! where an empty team starts.

use huddle_daemon::store::quotas::TeamCounters;
use huddle_daemon::store::retention::RetentionPolicy;
use huddle_daemon::store::{MessageFilter, Store, TaskFilter};
use huddle_sdk::wire::{PostMessage, TaskPatch, TaskStatus};
use huddle_tests::store::{backends, prefixes, task, team};
use serde_json::json;

fn post(summary: &str) -> PostMessage {
    PostMessage {
        to: "*".into(),
        kind: "note".into(),
        summary: summary.into(),
        data: json!({"n": summary}),
    }
}

async fn counters_of(store: &dyn Store, name: &str) -> TeamCounters {
    store
        .team_counters()
        .await
        .unwrap()
        .into_iter()
        .find(|c| c.team == name)
        .unwrap_or_else(|| panic!("no counters for {name}"))
}

/// The truth, counted from the rows: tasks per status, edges, messages.
async fn counted(store: &dyn Store, team_id: i64) -> ([u64; 5], u64, u64) {
    let filter = TaskFilter {
        limit: 1000,
        ..Default::default()
    };
    let tasks = store.list_tasks(team_id, filter).await.unwrap().items;
    let mut by_status = [0u64; 5];
    for t in &tasks {
        let i = TaskStatus::ALL.iter().position(|s| *s == t.status).unwrap();
        by_status[i] += 1;
    }
    let edges = tasks.iter().map(|t| t.blocked_by.len() as u64).sum();
    let filter = MessageFilter {
        limit: 1000,
        ..Default::default()
    };
    let messages = store
        .list_messages(team_id, filter)
        .await
        .unwrap()
        .items
        .len() as u64;
    (by_status, edges, messages)
}

#[tokio::test]
async fn the_counters_equal_a_count_of_the_rows_through_every_kind_of_write() {
    for (store, _dir) in backends().await {
        let (qa, tester, _) = team(&*store, "qa").await;
        let (ops, _, _) = team(&*store, "ops").await;
        let empty = counters_of(&*store, "qa").await;
        assert_eq!(empty.tasks, [0; 5]);
        assert_eq!(
            (
                empty.usage.edges,
                empty.usage.messages,
                empty.usage.storage_bytes
            ),
            (0, 0, 2),
            "a new team stores its empty memory document, `{{}}`"
        );

        store
            .create_tasks(
                &qa,
                vec![
                    task("TEST-001", &[]),
                    task("TEST-002", &["TEST-001"]),
                    task("TEST-003", &["TEST-001", "TEST-002"]),
                    task("TEST-004", &[]),
                    task("TEST-005", &[]),
                ],
            )
            .await
            .unwrap();
        store
            .create_tasks(&ops, vec![task("TEST-001", &[])])
            .await
            .unwrap();
        let held = store
            .claim_task(&tester, prefixes("TEST"), 60_000)
            .await
            .unwrap()
            .expect("a task");
        store
            .complete_task(&tester, &held.id, Some(json!({"out": "x".repeat(100)})))
            .await
            .unwrap();
        let second = store
            .claim_task(&tester, prefixes("TEST"), 60_000)
            .await
            .unwrap()
            .expect("another task");
        store
            .fail_task(&tester, &second.id, "broken".into(), true, None)
            .await
            .unwrap();
        store
            .claim_task(&tester, prefixes("TEST"), 60_000)
            .await
            .unwrap()
            .expect("a third task");
        let cancel = TaskPatch {
            status: Some(TaskStatus::Cancelled),
            ..TaskPatch::default()
        };
        store
            .update_task(&qa, "TEST-005", cancel, None)
            .await
            .unwrap();
        let drop_edge = TaskPatch {
            remove_blocked_by: vec!["TEST-002".into()],
            ..TaskPatch::default()
        };
        store
            .update_task(&qa, "TEST-003", drop_edge, None)
            .await
            .unwrap();
        for n in 0..3 {
            store
                .post_message(&tester, post(&format!("m{n}")), None)
                .await
                .unwrap();
        }
        store
            .post_messages(&tester, vec![(post("b1"), None), (post("b2"), None)])
            .await
            .unwrap();
        store
            .replace_memory(&qa, json!({"notes": "y".repeat(300)}), None)
            .await
            .unwrap();

        for (name, caller) in [("qa", &qa), ("ops", &ops)] {
            let c = counters_of(&*store, name).await;
            let (tasks, edges, messages) = counted(&*store, caller.team_id).await;
            assert_eq!(c.tasks, tasks, "{name}: tasks per status");
            assert_eq!(
                (c.usage.tasks, c.usage.edges, c.usage.messages),
                (tasks.iter().sum(), edges, messages),
                "{name}"
            );
        }
        let qa_now = counters_of(&*store, "qa").await;
        assert_eq!(qa_now.tasks_with(TaskStatus::Completed), 1);
        assert_eq!(qa_now.tasks_with(TaskStatus::Failed), 1);
        assert_eq!(qa_now.tasks_with(TaskStatus::Cancelled), 1);
        assert!(
            qa_now.usage.storage_bytes > 300 + 100,
            "the memory document and the result count: {qa_now:?}"
        );

        // Retention deletes every finished task nobody waits on and every message: the
        // counters fall with the rows, and the bytes with them.
        let all = RetentionPolicy {
            finished_tasks_max_age_ms: Some(0),
            messages_per_team: Some(0),
            batch: 1000,
            ..RetentionPolicy::default()
        };
        while store.prune(&all).await.unwrap().total() > 0 {}
        let (tasks, edges, messages) = counted(&*store, qa.team_id).await;
        let c = counters_of(&*store, "qa").await;
        assert_eq!(
            (c.tasks, c.usage.edges, c.usage.messages),
            (tasks, edges, messages)
        );
        assert_eq!(messages, 0);

        // Emptied by hand, the team is back to what a new team stores.
        store.replace_memory(&qa, json!({}), None).await.unwrap();
        let open: Vec<String> = store
            .list_tasks(
                qa.team_id,
                TaskFilter {
                    limit: 100,
                    ..Default::default()
                },
            )
            .await
            .unwrap()
            .items
            .into_iter()
            .map(|t| t.id)
            .collect();
        for id in &open {
            let done = TaskPatch {
                status: Some(TaskStatus::Cancelled),
                ..TaskPatch::default()
            };
            store.update_task(&qa, id, done, None).await.unwrap();
        }
        while store.prune(&all).await.unwrap().total() > 0 {}
        let c = counters_of(&*store, "qa").await;
        assert_eq!(c.tasks, [0; 5], "{c:?}");
        assert_eq!(
            (c.usage.edges, c.usage.messages, c.usage.storage_bytes),
            (0, 0, 2),
            "every byte counted in was counted out: {c:?}"
        );
    }
}
