//! What `fail` means, on every backend: an attempt that fails returns the task to the queue
//! while it has attempts left; `final`, or the last attempt, fails it; dependents react only to
//! the final state.

use huddle_sdk::wire::TaskStatus;
use huddle_tests::store::{agent, backends, prefixes, ready_ids, task, team};

#[tokio::test]
async fn a_failed_attempt_requeues_the_task_until_its_attempts_are_used() {
    for (store, _dir) in backends().await {
        let (coord, tester, _) = team(&*store, "qa").await;
        let other = agent(
            &*store,
            coord.team_id,
            "qa",
            "tester-2",
            huddle_sdk::wire::Role::Tester,
        )
        .await;
        let mut first = task("TEST-001", &[]);
        first.max_attempts = Some(3);
        store
            .create_tasks(&coord, vec![first, task("TEST-002", &["TEST-001"])])
            .await
            .unwrap();
        for (attempt, holder) in [(1, &tester), (2, &other)] {
            store
                .claim_task(holder, prefixes("TEST"), 60_000)
                .await
                .unwrap()
                .unwrap();
            let reason = format!("attempt {attempt}: flaky network");
            let t = store
                .fail_task(holder, "TEST-001", reason.clone(), false, None)
                .await
                .unwrap();
            assert_eq!(t.status, TaskStatus::Pending, "attempt {attempt} requeues");
            assert_eq!(t.attempts, attempt);
            assert_eq!(t.claimed_by, None);
            assert_eq!(t.lease_expires_at, None);
            assert_eq!(t.failure_reason.as_deref(), Some(reason.as_str()));
            // The dependent waits: a retry is not a final state.
            assert_eq!(ready_ids(&*store, coord.team_id).await, ["TEST-001"]);
        }
        let events = store.list_events(coord.team_id, 0, 1000).await.unwrap();
        let retried = events.iter().filter(|e| e.kind == "task.retried").count();
        assert_eq!(retried, 2, "each requeue is a task.retried event");
        // The last attempt fails the task for good; its dependent never becomes ready.
        store
            .claim_task(&tester, prefixes("TEST"), 60_000)
            .await
            .unwrap()
            .unwrap();
        let t = store
            .fail_task(&tester, "TEST-001", "still broken".into(), false, None)
            .await
            .unwrap();
        assert_eq!((t.status, t.attempts), (TaskStatus::Failed, 3));
        assert_eq!(
            t.claimed_by.as_deref(),
            Some("tester"),
            "the last holder is kept"
        );
        assert!(ready_ids(&*store, coord.team_id).await.is_empty());
        let events = store.list_events(coord.team_id, 0, 1000).await.unwrap();
        assert_eq!(events.last().unwrap().kind, "task.failed");
    }
}

#[tokio::test]
async fn a_final_failure_fails_the_task_at_once_and_a_retry_can_still_complete() {
    for (store, _dir) in backends().await {
        let (coord, tester, _) = team(&*store, "qa").await;
        store
            .create_tasks(
                &coord,
                vec![
                    task("TEST-001", &[]),
                    task("TEST-002", &[]),
                    task("TEST-003", &["TEST-002"]),
                ],
            )
            .await
            .unwrap();
        let t = store
            .claim_task(&tester, prefixes("TEST"), 60_000)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(t.id, "TEST-001");
        let t = store
            .fail_task(&tester, "TEST-001", "no such module".into(), true, None)
            .await
            .unwrap();
        assert_eq!((t.status, t.attempts), (TaskStatus::Failed, 1));
        // TEST-002 fails once, is retried and completes: its dependent becomes ready then.
        store
            .claim_task(&tester, prefixes("TEST"), 60_000)
            .await
            .unwrap()
            .unwrap();
        store
            .fail_task(&tester, "TEST-002", "timeout".into(), false, None)
            .await
            .unwrap();
        assert_eq!(ready_ids(&*store, coord.team_id).await, ["TEST-002"]);
        let again = store
            .claim_task(&tester, prefixes("TEST"), 60_000)
            .await
            .unwrap()
            .unwrap();
        assert_eq!((again.id.as_str(), again.attempts), ("TEST-002", 1));
        store
            .complete_task(&tester, "TEST-002", None)
            .await
            .unwrap();
        assert_eq!(ready_ids(&*store, coord.team_id).await, ["TEST-003"]);
    }
}
