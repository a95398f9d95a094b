//! A writer stall never expires a lease that was heartbeated on time. The stall is real: the
//! test holds SQLite's write lock on the daemon's database file (as a backup tool or a
//! `sqlite3` shell could) for two and a half lease lengths, while a tester heartbeats every 100 ms
//! with a 1 s lease and the sweeper runs every 20 ms. A sweep queued during the stall used
//! to run first, judged by the time the writer got to it, and hand the task to another tester.

use huddle_tests::TestDaemon;
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[tokio::test]
async fn a_lease_heartbeated_on_time_survives_a_writer_stall() {
    let d = TestDaemon::start_with(|s| {
        s.storage.backend = huddle_daemon::store::Backend::Sqlite;
        s.tasks.lease_sweep_ms = 20;
    })
    .await;
    let coordinator = d.team("qa").await;
    coordinator
        .post(
            &coordinator.t("/tasks"),
            json!({"id": "TEST-001", "subject": "long"}),
        )
        .await
        .expect_status(201);
    let holder = d.agent("qa", "holder", "tester").await;
    let rival = d.agent("qa", "rival", "tester").await;
    let held = holder
        .claim(json!({"leaseMs": 1000}))
        .await
        .expect("claimed");
    assert_eq!(held["id"], "TEST-001");

    // The holder heartbeats every 100 ms, each after the previous one answered, and says when
    // one has been answered.
    let stop = Arc::new(AtomicBool::new(false));
    let (answered_tx, mut answered) = tokio::sync::mpsc::unbounded_channel();
    let beats = {
        let (holder, stop) = (holder.clone(), stop.clone());
        tokio::spawn(async move {
            let mut statuses = Vec::new();
            let mut every = tokio::time::interval(Duration::from_millis(100));
            while !stop.load(Ordering::Relaxed) {
                every.tick().await;
                let reply = holder
                    .post(
                        &holder.t("/tasks/TEST-001/heartbeat"),
                        json!({"leaseMs": 1000}),
                    )
                    .await;
                statuses.push(reply.status.as_u16());
                let _ = answered_tx.send(());
            }
            statuses
        })
    };

    // Right after a heartbeat was answered (so the next sweep queues before the next beat),
    // the writer stalls on the database's write lock for 2.5 s.
    answered.recv().await.expect("a first heartbeat");
    let lock = rusqlite::Connection::open(d.data_dir.join("huddle.db")).expect("open the file");
    lock.execute_batch("begin immediate")
        .expect("take the write lock");
    let write_during_stall = {
        let coordinator = coordinator.clone();
        tokio::spawn(async move {
            coordinator
                .post(
                    &coordinator.t("/messages"),
                    json!({"to": "*", "type": "status", "summary": "during the stall"}),
                )
                .await
                .status
                .as_u16()
        })
    };
    tokio::time::sleep(Duration::from_millis(2500)).await; // the stall itself
    assert!(
        !write_during_stall.is_finished(),
        "the writer was stalled: nothing could commit while the lock was held"
    );
    lock.execute_batch("commit")
        .expect("release the write lock");
    assert_eq!(write_during_stall.await.unwrap(), 201);
    // Two more beats after the stall, then stop.
    for _ in 0..2 {
        answered.recv().await.expect("a heartbeat after the stall");
    }
    stop.store(true, Ordering::Relaxed);
    let statuses = beats.await.unwrap();
    assert!(
        statuses.iter().all(|s| *s == 200),
        "every heartbeat was accepted: {statuses:?}"
    );

    let task = coordinator
        .get(&coordinator.t("/tasks/TEST-001"))
        .await
        .expect_status(200);
    assert_eq!(task.body["status"], "in_progress", "{}", task.body);
    assert_eq!(task.body["claimedBy"], "holder", "{}", task.body);
    assert_eq!(
        task.body["attempts"], 0,
        "no expiry was counted: {}",
        task.body
    );
    assert!(rival.claim(json!({})).await.is_none(), "nothing to take");
}
