//! Per-team quotas on every backend: a write that would pass a quota is refused with
//! `team_quota` naming the quota, its limit, the team's use and what the request would add;
//! a refused batch stores nothing; an idempotent retry still answers; raising the team's
//! override lets the same write through.

use huddle_daemon::store::{Caller, MessageFilter, Store, StoreError, TaskFilter};
use huddle_sdk::wire::{codes, PostMessage, TaskPatch, TeamQuotas, TeamSettings};
use huddle_tests::store::{backends, task, team};
use serde_json::{json, Value};

fn post(summary: &str) -> PostMessage {
    PostMessage {
        to: "*".into(),
        kind: "note".into(),
        summary: summary.into(),
        data: json!({}),
    }
}

async fn set(store: &dyn Store, team_id: i64, quotas: TeamQuotas) {
    let settings = TeamSettings {
        quotas,
        ..TeamSettings::default()
    };
    store.set_team_settings(team_id, settings).await.unwrap();
}

/// The refusal's details, after checking it is `team_quota`.
fn refusal<T: std::fmt::Debug>(result: Result<T, StoreError>) -> Value {
    match result {
        Err(StoreError::Conflict { code, details, .. }) if code == codes::TEAM_QUOTA => details,
        other => panic!("expected team_quota, got {other:?}"),
    }
}

async fn task_count(store: &dyn Store, caller: &Caller) -> usize {
    let filter = TaskFilter {
        limit: 100,
        ..Default::default()
    };
    store
        .list_tasks(caller.team_id, filter)
        .await
        .unwrap()
        .items
        .len()
}

#[tokio::test]
async fn a_task_quota_refuses_the_whole_batch_that_passes_it_and_an_override_raises_it() {
    for (store, _dir) in backends().await {
        let (qa, _, _) = team(&*store, "qa").await;
        let (other, _, _) = team(&*store, "dev").await;
        let three = TeamQuotas {
            max_tasks: Some(3),
            ..TeamQuotas::default()
        };
        set(&*store, qa.team_id, three).await;
        store
            .create_tasks(&qa, vec![task("T-001", &[]), task("T-002", &[])])
            .await
            .unwrap();
        let details = refusal(
            store
                .create_tasks(&qa, vec![task("T-003", &[]), task("T-004", &[])])
                .await,
        );
        assert_eq!(
            details,
            json!({"quota": "tasks", "limit": 3, "used": 2, "add": 2})
        );
        assert_eq!(task_count(&*store, &qa).await, 2, "nothing of the batch");
        store
            .create_tasks(&qa, vec![task("T-003", &[])])
            .await
            .expect("exactly at the quota");
        refusal(store.create_tasks(&qa, vec![task("T-004", &[])]).await);
        // Another team is not limited by this team's override.
        let many: Vec<_> = (1..=5).map(|n| task(&format!("T-{n:03}"), &[])).collect();
        store.create_tasks(&other, many).await.unwrap();

        let five = TeamQuotas {
            max_tasks: Some(5),
            ..TeamQuotas::default()
        };
        set(&*store, qa.team_id, five).await;
        store
            .create_tasks(&qa, vec![task("T-004", &[]), task("T-005", &[])])
            .await
            .expect("the raised quota lets it through");
        let (settings, usage) = store.team_settings(qa.team_id).await.unwrap();
        assert_eq!(settings.quotas.max_tasks, Some(5));
        assert_eq!(usage.tasks, 5);
    }
}

#[tokio::test]
async fn an_edge_quota_refuses_patches_and_creates_that_add_blockers() {
    for (store, _dir) in backends().await {
        let (qa, _, _) = team(&*store, "qa").await;
        let two = TeamQuotas {
            max_edges: Some(2),
            ..TeamQuotas::default()
        };
        set(&*store, qa.team_id, two).await;
        store
            .create_tasks(
                &qa,
                vec![
                    task("T-001", &[]),
                    task("T-002", &[]),
                    task("T-003", &["T-001"]),
                ],
            )
            .await
            .unwrap();
        let add_two = TaskPatch {
            add_blocked_by: vec!["T-001".into(), "T-002".into()],
            ..TaskPatch::default()
        };
        let details = refusal(store.update_task(&qa, "T-002", add_two, None).await);
        assert_eq!(
            details,
            json!({"quota": "edges", "limit": 2, "used": 1, "add": 2})
        );
        let unchanged = store.get_task(qa.team_id, "T-002").await.unwrap();
        assert!(unchanged.blocked_by.is_empty(), "{unchanged:?}");
        let add_one = TaskPatch {
            add_blocked_by: vec!["T-001".into()],
            ..TaskPatch::default()
        };
        store
            .update_task(&qa, "T-002", add_one, None)
            .await
            .unwrap();
        refusal(
            store
                .create_tasks(&qa, vec![task("T-004", &["T-001"])])
                .await,
        );
        assert_eq!(task_count(&*store, &qa).await, 3);
    }
}

#[tokio::test]
async fn a_message_quota_refuses_a_batch_whole_and_still_answers_retries() {
    for (store, _dir) in backends().await {
        let (qa, tester, _) = team(&*store, "qa").await;
        let three = TeamQuotas {
            max_messages: Some(3),
            ..TeamQuotas::default()
        };
        set(&*store, qa.team_id, three).await;
        store
            .post_message(&tester, post("first"), Some("k-1".into()))
            .await
            .unwrap();
        let batch: Vec<_> = ["a", "b", "c"].iter().map(|s| (post(s), None)).collect();
        let details = refusal(store.post_messages(&tester, batch).await);
        assert_eq!(
            details,
            json!({"quota": "messages", "limit": 3, "used": 1, "add": 3})
        );
        let filter = MessageFilter {
            limit: 100,
            ..Default::default()
        };
        let stored = store.list_messages(qa.team_id, filter).await.unwrap().items;
        assert_eq!(stored.len(), 1, "nothing of the batch: {stored:?}");
        let batch: Vec<_> = ["a", "b"].iter().map(|s| (post(s), None)).collect();
        store.post_messages(&tester, batch).await.unwrap();
        // At the quota, a retry of a stored post is answered from what is stored.
        let replay = store
            .post_message(&tester, post("first"), Some("k-1".into()))
            .await
            .unwrap();
        assert!(replay.replayed);
        refusal(store.post_message(&tester, post("one more"), None).await);
    }
}

#[tokio::test]
async fn a_storage_quota_counts_tasks_messages_and_memory() {
    for (store, _dir) in backends().await {
        let (qa, tester, _) = team(&*store, "qa").await;
        let small = TeamQuotas {
            max_storage_bytes: Some(2_000),
            ..TeamQuotas::default()
        };
        set(&*store, qa.team_id, small).await;
        store
            .replace_memory(&qa, json!({"notes": "x".repeat(1_000)}), None)
            .await
            .unwrap();
        let details = refusal(
            store
                .replace_memory(&qa, json!({"notes": "x".repeat(3_000)}), None)
                .await,
        );
        assert_eq!(details["quota"], "storage_bytes");
        assert_eq!(details["limit"], 2_000);
        let mut big = post("big");
        big.summary = "y".repeat(1_500);
        refusal(store.post_message(&tester, big, None).await);
        let mut long = task("T-001", &[]);
        long.description = Some("z".repeat(1_500));
        refusal(store.create_tasks(&qa, vec![long]).await);
        // Shrinking is always allowed, and frees room.
        store.replace_memory(&qa, json!({}), None).await.unwrap();
        let mut long = task("T-001", &[]);
        long.description = Some("z".repeat(1_500));
        store.create_tasks(&qa, vec![long]).await.unwrap();
    }
}
