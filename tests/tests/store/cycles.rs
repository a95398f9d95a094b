//! One cycle search for both backends: on diamonds, long chains and cycles within a batch,
//! SQLite and PostgreSQL refuse the same edge and name the same (shortest) cycle.

use huddle_daemon::store::{Caller, Store, StoreError};
use huddle_sdk::wire::{NewTask, TaskPatch};
use huddle_tests::store::{backends, task, team};
use serde_json::{json, Value};

/// The cycle a refused change names, or a panic saying what happened instead.
fn cycle_of<T: std::fmt::Debug>(outcome: Result<T, StoreError>) -> Value {
    match outcome {
        Err(StoreError::Conflict {
            code: "dependency_cycle",
            details,
            ..
        }) => details["cycle"].clone(),
        other => panic!("expected a dependency cycle, got {other:?}"),
    }
}

async fn add_blocker(store: &dyn Store, coord: &Caller, id: &str, blocker: &str) -> Value {
    let patch = TaskPatch {
        add_blocked_by: vec![blocker.to_string()],
        ..Default::default()
    };
    cycle_of(store.update_task(coord, id, patch, None).await)
}

/// Each backend's answer to `check`, which must be the same everywhere.
async fn same_on_every_backend<F, Fut>(check: F) -> Value
where
    F: Fn(std::sync::Arc<dyn Store>, Caller) -> Fut,
    Fut: std::future::Future<Output = Value>,
{
    let mut answers = Vec::new();
    for (store, _dir) in backends().await {
        let (coord, _, _) = team(&*store, "qa").await;
        answers.push(check(store, coord).await);
    }
    assert!(
        answers.windows(2).all(|w| w[0] == w[1]),
        "backends disagree: {answers:?}"
    );
    answers.remove(0)
}

#[tokio::test]
async fn a_cycle_through_a_diamond_is_named_by_its_shortest_branch_on_both_backends() {
    // 001 ← 002 ← 003 ← 005 (long branch), 001 ← 004 ← 005 (short branch), 006 ← 005.
    let cycle = same_on_every_backend(|store, coord| async move {
        store
            .create_tasks(
                &coord,
                vec![
                    task("TEST-001", &[]),
                    task("TEST-002", &["TEST-001"]),
                    task("TEST-003", &["TEST-002"]),
                    task("TEST-004", &["TEST-001"]),
                    task("TEST-005", &["TEST-003", "TEST-004"]),
                    task("TEST-006", &["TEST-005"]),
                ],
            )
            .await
            .unwrap();
        add_blocker(&*store, &coord, "TEST-001", "TEST-006").await
    })
    .await;
    assert_eq!(
        cycle,
        json!(["TEST-001", "TEST-006", "TEST-005", "TEST-004", "TEST-001"])
    );
}

#[tokio::test]
async fn a_cycle_through_two_equal_branches_names_the_same_one_on_both_backends() {
    // 004 is blocked by 002 and 003, both blocked by 001; given in reverse order.
    let cycle = same_on_every_backend(|store, coord| async move {
        store
            .create_tasks(
                &coord,
                vec![
                    task("TEST-001", &[]),
                    task("TEST-003", &["TEST-001"]),
                    task("TEST-002", &["TEST-001"]),
                    task("TEST-004", &["TEST-003", "TEST-002"]),
                ],
            )
            .await
            .unwrap();
        add_blocker(&*store, &coord, "TEST-001", "TEST-004").await
    })
    .await;
    assert_eq!(
        cycle,
        json!(["TEST-001", "TEST-004", "TEST-002", "TEST-001"])
    );
}

#[tokio::test]
async fn a_long_chain_is_named_whole_on_both_backends() {
    let ids: Vec<String> = (1..=400).map(|n| format!("CHAIN-{n:03}")).collect();
    let expected: Vec<String> = std::iter::once(ids[0].clone())
        .chain(ids.iter().rev().cloned())
        .collect();
    let chain = ids.clone();
    let cycle = same_on_every_backend(move |store, coord| {
        let chain = chain.clone();
        async move {
            let tasks: Vec<NewTask> = chain
                .iter()
                .enumerate()
                .map(|(i, id)| match i {
                    0 => task(id, &[]),
                    _ => task(id, &[chain[i - 1].as_str()]),
                })
                .collect();
            store.create_tasks(&coord, tasks).await.unwrap();
            add_blocker(&*store, &coord, &chain[0], &chain[399]).await
        }
    })
    .await;
    assert_eq!(cycle, json!(expected));
}

#[tokio::test]
async fn a_cycle_within_one_batch_is_refused_whole_and_named_alike() {
    let cycle = same_on_every_backend(|store, coord| async move {
        let refused = store
            .create_tasks(
                &coord,
                vec![
                    task("LOOP-001", &["LOOP-003"]),
                    task("LOOP-002", &["LOOP-001"]),
                    task("LOOP-003", &["LOOP-002"]),
                ],
            )
            .await;
        let cycle = cycle_of(refused);
        let none = store
            .list_tasks(
                coord.team_id,
                huddle_daemon::store::TaskFilter {
                    limit: 10,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert!(none.items.is_empty(), "a refused batch creates nothing");
        cycle
    })
    .await;
    assert_eq!(
        cycle,
        json!(["LOOP-003", "LOOP-002", "LOOP-001", "LOOP-003"])
    );
}
