//! A claim that finds nothing is remembered on SQLite so the claimer's next look skips the
//! writer: every way a task becomes ready afterwards must still reach that claimer's next look.

use huddle_daemon::store::{Caller, Store};
use huddle_sdk::wire::{NewTask, Role, TaskPatch, TaskStatus};
use huddle_tests::store::{agent, backends, prefixes, task, team};
use std::time::{Duration, Instant};

async fn claim(store: &dyn Store, who: &Caller) -> Option<String> {
    store
        .claim_task(who, prefixes("TEST"), 60_000)
        .await
        .unwrap()
        .map(|t| t.id)
}

/// Claims until nothing is left, so the next look may be answered without the writer.
async fn drain(store: &dyn Store, who: &Caller) {
    assert_eq!(claim(store, who).await, None);
    assert_eq!(claim(store, who).await, None);
}

fn owned(id: &str, owner: &str) -> NewTask {
    NewTask {
        owner: Some(owner.into()),
        ..task(id, &[])
    }
}

#[tokio::test]
async fn a_claimer_that_found_nothing_sees_every_task_made_ready_after() {
    for (store, _dir) in backends().await {
        let store = &*store;
        let (coord, _, _) = team(store, "qa").await;
        // Named apart from its role, so a task owned by the one is not taken for the other.
        let t1 = agent(store, coord.team_id, "qa", "t1", Role::Tester).await;
        drain(store, &t1).await;

        // Created unowned, or owned by the claimer's role or name.
        store
            .create_tasks(&coord, vec![task("TEST-001", &[])])
            .await
            .unwrap();
        assert_eq!(claim(store, &t1).await.as_deref(), Some("TEST-001"));
        drain(store, &t1).await;
        store
            .create_tasks(&coord, vec![owned("TEST-002", "tester")])
            .await
            .unwrap();
        assert_eq!(claim(store, &t1).await.as_deref(), Some("TEST-002"));
        drain(store, &t1).await;
        store
            .create_tasks(&coord, vec![owned("TEST-003", "t1")])
            .await
            .unwrap();
        assert_eq!(claim(store, &t1).await.as_deref(), Some("TEST-003"));

        // Owned by someone else: not the claimer's, until a patch hands it over.
        store
            .create_tasks(&coord, vec![owned("TEST-004", "t2")])
            .await
            .unwrap();
        drain(store, &t1).await;
        let to_t1 = TaskPatch {
            owner: Some(Some("t1".into())),
            ..Default::default()
        };
        store
            .update_task(&coord, "TEST-004", to_t1, None)
            .await
            .unwrap();
        assert_eq!(claim(store, &t1).await.as_deref(), Some("TEST-004"));

        // Unblocked by its blocker's completion.
        store
            .create_tasks(&coord, vec![task("TEST-005", &["TEST-001"])])
            .await
            .unwrap();
        drain(store, &t1).await;
        store.complete_task(&t1, "TEST-001", None).await.unwrap();
        assert_eq!(claim(store, &t1).await.as_deref(), Some("TEST-005"));

        // Given back by its holder.
        drain(store, &t1).await;
        store.release_task(&t1, "TEST-005").await.unwrap();
        assert_eq!(claim(store, &t1).await.as_deref(), Some("TEST-005"));

        // Reopened by the coordinator.
        store.complete_task(&t1, "TEST-005", None).await.unwrap();
        drain(store, &t1).await;
        let reopen = TaskPatch {
            status: Some(TaskStatus::Pending),
            ..Default::default()
        };
        store
            .update_task(&coord, "TEST-005", reopen, None)
            .await
            .unwrap();
        assert_eq!(claim(store, &t1).await.as_deref(), Some("TEST-005"));

        // Back in the queue when its lease runs out.
        store.complete_task(&t1, "TEST-005", None).await.unwrap();
        store
            .create_tasks(&coord, vec![task("TEST-006", &[])])
            .await
            .unwrap();
        let short = store
            .claim_task(&t1, prefixes("TEST"), 1)
            .await
            .unwrap()
            .map(|t| t.id);
        assert_eq!(short.as_deref(), Some("TEST-006"));
        drain(store, &t1).await;
        let deadline = Instant::now() + Duration::from_secs(30);
        while store.expire_leases().await.unwrap() == 0 {
            assert!(Instant::now() < deadline, "the 1 ms lease never expired");
            tokio::task::yield_now().await;
        }
        assert_eq!(claim(store, &t1).await.as_deref(), Some("TEST-006"));

        // Freed by a patch that drops its open blocker.
        store
            .create_tasks(&coord, vec![task("TEST-007", &["TEST-006"])])
            .await
            .unwrap();
        drain(store, &t1).await;
        let unblock = TaskPatch {
            remove_blocked_by: vec!["TEST-006".into()],
            ..Default::default()
        };
        store
            .update_task(&coord, "TEST-007", unblock, None)
            .await
            .unwrap();
        assert_eq!(claim(store, &t1).await.as_deref(), Some("TEST-007"));
    }
}
