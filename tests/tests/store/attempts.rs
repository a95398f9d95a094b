//! Attempts never pass `maxAttempts`, on every backend: a task reopened by hand after its last
//! attempt fails again at the same count, whether the attempt fails or its lease runs out.

use huddle_daemon::store::{Caller, Store};
use huddle_sdk::wire::{TaskPatch, TaskStatus};
use huddle_tests::store::{backends, prefixes, task, team};
use std::time::{Duration, Instant};

async fn reopen(store: &dyn Store, coord: &Caller, id: &str) {
    let patch = TaskPatch {
        status: Some(TaskStatus::Pending),
        ..Default::default()
    };
    let t = store.update_task(coord, id, patch, None).await.unwrap();
    assert_eq!(t.status, TaskStatus::Pending);
}

#[tokio::test]
async fn a_task_reopened_after_its_last_attempt_stays_within_its_attempts() {
    for (store, _dir) in backends().await {
        let (coord, tester, _) = team(&*store, "qa").await;
        let mut once = task("TEST-001", &[]);
        once.max_attempts = Some(1);
        store.create_tasks(&coord, vec![once]).await.unwrap();
        for round in 1..=2 {
            store
                .claim_task(&tester, prefixes("TEST"), 60_000)
                .await
                .unwrap()
                .unwrap();
            let failed = store
                .fail_task(&tester, "TEST-001", format!("round {round}"), false, None)
                .await
                .unwrap();
            assert_eq!(failed.status, TaskStatus::Failed, "round {round}");
            assert_eq!(failed.attempts, 1, "round {round}: 1 of 1 attempts");
            reopen(&*store, &coord, "TEST-001").await;
        }
        // The lease running out counts the same way.
        let claimed = store
            .claim_task(&tester, prefixes("TEST"), 1)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(claimed.attempts, 1);
        let deadline = Instant::now() + Duration::from_secs(30);
        while store.expire_leases().await.unwrap() == 0 {
            assert!(Instant::now() < deadline, "the 1 ms lease never expired");
            tokio::task::yield_now().await;
        }
        let expired = store.get_task(coord.team_id, "TEST-001").await.unwrap();
        assert_eq!(expired.status, TaskStatus::Failed);
        assert_eq!(
            expired.attempts, 1,
            "an expired lease stays within maxAttempts"
        );
    }
}
