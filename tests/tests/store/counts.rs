//! `Store::task_counts` (what `/metrics` reports as `huddle_tasks`): tasks per team and status,
//! only the statuses a team has, on every backend (SQLite overrides the trait's default with a
//! grouped query; the default pages through `list_tasks`).

use huddle_sdk::wire::TaskStatus;
use huddle_tests::store::{backends, prefixes, task, team};

#[tokio::test]
async fn task_counts_are_per_team_and_status() {
    for (store, _dir) in backends().await {
        let (qa, tester, _) = team(&*store, "qa").await;
        let (ops, _, _) = team(&*store, "ops").await;
        store
            .create_tasks(&qa, vec![task("TEST-001", &[]), task("TEST-002", &[])])
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
        store.complete_task(&tester, &held.id, None).await.unwrap();

        let mut counts = store.task_counts().await.unwrap();
        counts.sort_by(|a, b| (&a.0, a.1.as_str()).cmp(&(&b.0, b.1.as_str())));
        assert_eq!(
            counts,
            [
                ("ops".to_string(), TaskStatus::Pending, 1),
                ("qa".to_string(), TaskStatus::Completed, 1),
                ("qa".to_string(), TaskStatus::Pending, 1),
            ]
        );
    }
}
