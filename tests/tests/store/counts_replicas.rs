//! The usage counters on PostgreSQL under two replicas' concurrent claims, completions,
//! failures, releases and edits: the daemon counts task updates itself (migration 0018), each
//! transaction in its connection's slot, so every slot written by every replica must sum to a
//! count of the rows, bytes included (recounted here in SQL, as migration 0005 first filled
//! the counters).

use huddle_daemon::hub::Hub;
use huddle_daemon::store::quotas::TeamCounters;
use huddle_daemon::store::Store;
use huddle_sdk::wire::{TaskPatch, TaskStatus};
use huddle_tests::store::{agent, postgres_on, prefixes, task, team};
use serde_json::json;
use std::sync::Arc;

const TASKS: usize = 240;
const WORKERS: usize = 8;

/// Tasks per status (`TaskStatus::ALL`'s order) and stored bytes, counted from the rows.
async fn recount(url: &str, team_id: i64) -> ([i64; 5], i64) {
    let pool = sqlx::PgPool::connect(url).await.unwrap();
    let mut statuses = [0i64; 5];
    for (i, s) in TaskStatus::ALL.iter().enumerate() {
        statuses[i] =
            sqlx::query_scalar("select count(*) from tasks where team_id = $1 and status = $2")
                .bind(team_id)
                .bind(s.as_str())
                .fetch_one(&pool)
                .await
                .unwrap();
    }
    let bytes: i64 = sqlx::query_scalar(
        "select (coalesce((select sum(huddle_task_bytes(t.subject, t.description, t.active_form,
                              t.metadata, t.result, t.failure_reason))
                           from tasks t where t.team_id = $1), 0)
               + coalesce((select sum(octet_length(m.summary) + octet_length(m.data))
                           from messages m where m.team_id = $1), 0)
               + (select octet_length(memory_doc) from teams where id = $1))::bigint",
    )
    .bind(team_id)
    .fetch_one(&pool)
    .await
    .unwrap();
    pool.close().await;
    (statuses, bytes)
}

async fn counters(store: &dyn Store) -> TeamCounters {
    store
        .team_counters()
        .await
        .unwrap()
        .into_iter()
        .find(|c| c.team == "qa")
        .expect("the team's counters")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_claiming_and_completing_at_once_keep_the_counters_equal_to_the_rows() {
    let url = huddle_tests::pg::fresh_database().await;
    let (a, _ka) = postgres_on(&url, Arc::new(Hub::new(4096))).await;
    let (b, _kb) = postgres_on(&url, Arc::new(Hub::new(4096))).await;
    let (coord, _, _) = team(&*a, "qa").await;
    let ids: Vec<String> = (1..=TASKS).map(|n| format!("TEST-{n:03}")).collect();
    for chunk in ids.chunks(60) {
        let batch = chunk.iter().map(|id| task(id, &[])).collect();
        a.create_tasks(&coord, batch).await.unwrap();
    }

    let mut workers = Vec::new();
    for w in 0..WORKERS {
        let store = if w % 2 == 0 { a.clone() } else { b.clone() };
        let me = agent(
            &*store,
            coord.team_id,
            "qa",
            &format!("w{w}"),
            huddle_sdk::wire::Role::Tester,
        )
        .await;
        workers.push(tokio::spawn(async move {
            let mut round = 0usize;
            loop {
                round += 1;
                let max = 1 + (w + round) % 4;
                let held = store
                    .claim_tasks(&me, prefixes("TEST"), 60_000, max)
                    .await
                    .unwrap();
                if held.is_empty() {
                    return;
                }
                for (k, t) in held.iter().enumerate() {
                    match (w + round + k) % 5 {
                        // A last attempt failed, with a reason of some size.
                        0 => {
                            store
                                .fail_task(&me, &t.id, "x".repeat(10 + k), true, None)
                                .await
                                .unwrap();
                        }
                        // Released: pending again, claimed by someone later.
                        1 if round < 4 => {
                            store.release_task(&me, &t.id).await.unwrap();
                        }
                        // A heartbeat, then completed.
                        2 => {
                            store.heartbeat(&me, &t.id, 60_000).await.unwrap();
                            store
                                .complete_task(&me, &t.id, Some(json!({"log": "y".repeat(k * 50)})))
                                .await
                                .unwrap();
                        }
                        _ => {
                            store
                                .complete_tasks(&me, vec![(t.id.clone(), Some(json!({"ok": w})))])
                                .await
                                .unwrap();
                        }
                    }
                }
            }
        }));
    }
    // The coordinator edits and cancels meanwhile, through the other replica.
    for id in ids.iter().rev().take(20) {
        let patch = TaskPatch {
            description: Some("z".repeat(200)),
            ..TaskPatch::default()
        };
        // A task someone already closed keeps its text: only an open one is edited.
        let _ = b.update_task(&coord, id, patch, None).await;
    }
    for w in workers {
        w.await.unwrap();
    }

    let c = counters(&*a).await;
    let (statuses, bytes) = recount(&url, coord.team_id).await;
    let counted: Vec<i64> = c.tasks.iter().map(|n| *n as i64).collect();
    assert_eq!(counted, statuses.to_vec(), "tasks per status: {c:?}");
    assert_eq!(c.usage.storage_bytes as i64, bytes, "stored bytes: {c:?}");
    assert_eq!(
        statuses[0] + statuses[1],
        0,
        "every task was closed: {statuses:?}"
    );
    assert!(statuses[2] > 0 && statuses[3] > 0, "{statuses:?}");
}
