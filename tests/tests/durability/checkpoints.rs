//! Checkpoints run beside the writer (`store/sqlite/checkpointer.rs`), not inside its commits:
//! while the daemon keeps running, what was written reaches the database file.

use huddle_tests::TestDaemon;
use serde_json::json;
use std::time::{Duration, Instant};

fn size(path: &std::path::Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

#[tokio::test]
async fn written_pages_reach_the_database_file_while_the_daemon_runs() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let db = d.data_dir.join("huddle.db");
    let wal = d.data_dir.join("huddle.db-wal");
    let before = size(&db);
    // Each batch writes about 150 WAL pages: twenty are well past a checkpoint's worth.
    let batch: Vec<_> = (0..1000)
        .map(|i| json!({"prefix": "TEST", "subject": format!("task {i}")}))
        .collect();
    for _ in 0..20 {
        c.post(&c.t("/tasks"), json!(batch))
            .await
            .expect_status(201);
    }
    // Only a checkpoint writes the database file in WAL mode; the writer no longer runs one.
    let deadline = Instant::now() + Duration::from_secs(60);
    while size(&db) < before + 4 * 1024 * 1024 {
        assert!(
            Instant::now() < deadline,
            "no checkpoint copied the writes: db {} bytes (was {before}), WAL {} bytes",
            size(&db),
            size(&wal)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let tasks = c.get(&c.t("/tasks?limit=1")).await.expect_status(200);
    assert_eq!(tasks.body["tasks"][0]["id"], "TEST-001");
}
