//! PostgreSQL only: a young database gets fresh planner statistics for its tasks once this
//! replica's created tasks reach 1,000 (then each time they double), so cached plans made while
//! the table was tiny are replaced (`store/postgres/analyzer.rs`).

use huddle_daemon::hub::Hub;
use huddle_tests::store::{postgres_on, task, team};
use sqlx::Connection;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Manual `ANALYZE` runs of `tasks` (autovacuum's are counted apart).
async fn analyzed(conn: &mut sqlx::PgConnection) -> i64 {
    sqlx::query_scalar(
        "select coalesce(max(analyze_count), 0) from pg_stat_user_tables where relname = 'tasks'",
    )
    .fetch_one(conn)
    .await
    .unwrap()
}

#[tokio::test]
async fn the_task_tables_are_analyzed_when_created_tasks_reach_a_thousand() {
    let url = huddle_tests::pg::fresh_database().await;
    let (store, _keep) = postgres_on(&url, Arc::new(Hub::new(64))).await;
    let (coord, _, _) = team(&*store, "qa").await;
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    let batch = |from: usize, to: usize| {
        (from..=to)
            .map(|i| task(&format!("TEST-{i:04}"), &[]))
            .collect::<Vec<_>>()
    };
    store.create_tasks(&coord, batch(1, 999)).await.unwrap();
    assert_eq!(
        analyzed(&mut conn).await,
        0,
        "999 tasks are not yet worth it"
    );
    store.create_tasks(&coord, batch(1000, 1000)).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while analyzed(&mut conn).await == 0 {
        assert!(
            Instant::now() < deadline,
            "the tasks table was not analyzed after 1,000 tasks"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
