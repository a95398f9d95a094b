//! A wide dependency graph cannot make one request walk it whole: the cycle check of a task's
//! new blockers reads at most `[limits] max_dependency_walk` edges (20,000 by default) and
//! past that refuses the change with `TooLarge`, storing nothing — on both backends. Within
//! the budget, cycles are still found.

use huddle_daemon::store::{Caller, Store, StoreError};
use huddle_sdk::wire::{NewTask, TaskPatch};
use huddle_tests::store::{backends, task, team};

const WIDTH: usize = 100;

fn rung(level: usize, i: usize) -> String {
    format!("LAD-{:04}", level * WIDTH + i)
}

/// A ladder: `levels` levels of `WIDTH` tasks, each blocked by every task of the level before.
async fn ladder(store: &dyn Store, coord: &Caller, levels: usize) {
    for level in 0..levels {
        let blockers: Vec<String> = if level == 0 {
            vec![]
        } else {
            (0..WIDTH).map(|i| rung(level - 1, i)).collect()
        };
        // 50 tasks × 100 blockers = the 5,000 edges one request may add.
        for half in 0..2 {
            let tasks: Vec<NewTask> = (half * WIDTH / 2..(half + 1) * WIDTH / 2)
                .map(|i| NewTask {
                    blocked_by: blockers.clone(),
                    ..task(&rung(level, i), &[])
                })
                .collect();
            store.create_tasks(coord, tasks).await.unwrap();
        }
    }
}

fn add(blockers: Vec<String>) -> TaskPatch {
    TaskPatch {
        add_blocked_by: blockers,
        ..Default::default()
    }
}

#[tokio::test]
async fn blockers_reaching_a_wide_graph_past_the_walk_budget_are_refused_on_both_backends() {
    for (store, _dir) in backends().await {
        let (coord, _, _) = team(&*store, "qa").await;
        // 4 levels: 30,000 edges under the top level.
        ladder(&*store, &coord, 4).await;
        // HEAD-001 has a dependent, so its new blockers must be checked for a cycle.
        store
            .create_tasks(
                &coord,
                vec![task("HEAD-001", &[]), task("HEAD-002", &["HEAD-001"])],
            )
            .await
            .unwrap();
        let top: Vec<String> = (0..WIDTH).map(|i| rung(3, i)).collect();
        match store.update_task(&coord, "HEAD-001", add(top), None).await {
            Err(StoreError::TooLarge { message }) => {
                assert!(message.contains("max_dependency_walk"), "{message}");
                assert!(message.contains("20000"), "{message}");
            }
            other => panic!("expected the walk to be refused, got {other:?}"),
        }
        let head = store.get_task(coord.team_id, "HEAD-001").await.unwrap();
        assert!(head.blocked_by.is_empty(), "nothing stored: {head:?}");

        // Level 1 reaches 10,000 edges: within the budget, accepted.
        let low: Vec<String> = (0..WIDTH).map(|i| rung(1, i)).collect();
        let head = store
            .update_task(&coord, "HEAD-001", add(low), None)
            .await
            .expect("within the walk budget");
        assert_eq!(head.blocked_by.len(), WIDTH);

        // A cycle within the budget is still found: level 0 blocked by level 1.
        match store
            .update_task(&coord, &rung(0, 0), add(vec![rung(1, 5)]), None)
            .await
        {
            Err(StoreError::Conflict {
                code: "dependency_cycle",
                ..
            }) => {}
            other => panic!("expected a cycle, got {other:?}"),
        }
    }
}
