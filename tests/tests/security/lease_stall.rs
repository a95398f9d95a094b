//! A writer stall never expires a lease that was heartbeated on time. The stall is real: the
//! test holds SQLite's write lock on the daemon's database file (as a backup tool or a
//! `sqlite3` shell could) for two and a half lease lengths, while a tester heartbeats every 100 ms
//! with a 1 s lease and the sweeper runs every 20 ms. A sweep queued during the stall used
//! to run first, judged by the time the writer got to it, and hand the task to another tester.

use huddle_tests::{eventually, Api, TestDaemon};
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[tokio::test]
async fn a_lease_heartbeated_on_time_survives_a_writer_stall() {
    let d = TestDaemon::start_with(|s| {
        s.storage.backend = huddle_daemon::config::Backend::Sqlite;
        s.tasks.lease_sweep_ms = 20;
    })
    .await;
    let (coordinator, holder) = one_task_and_its_holder(&d).await;
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

    let task = still_held(&coordinator).await;
    assert_eq!(
        task.body["attempts"], 0,
        "no expiry was counted: {}",
        task.body
    );
    assert!(rival.claim(json!({})).await.is_none(), "nothing to take");
}

/// A heartbeat that waits for a slot in its team's writer queue (the team's own writes fill it)
/// is not yet in the queue, so a sweep sent meanwhile used to overtake it and expire the lease
/// it arrived in time to renew. The queue holds 4 jobs here (`max_batch` 1); the writer is
/// stalled on the database's write lock while twelve writes and then the heartbeat arrive, and
/// released after the lease's end. The order is read from `/metrics`
/// (`huddle_writer_unsent`: writes not yet in the queue), not from timing.
#[tokio::test]
async fn a_heartbeat_waiting_behind_its_own_teams_writes_still_counts() {
    let d = TestDaemon::start_with(|s| {
        s.storage.backend = huddle_daemon::config::Backend::Sqlite;
        s.storage.max_batch = 1;
        s.tasks.lease_sweep_ms = 20;
    })
    .await;
    let (coordinator, holder) = one_task_and_its_holder(&d).await;
    let lease = Duration::from_millis(2500);
    holder
        .claim(json!({"leaseMs": lease.as_millis() as u64}))
        .await
        .expect("claimed");
    let lease_ends = tokio::time::Instant::now() + lease;

    let lock = rusqlite::Connection::open(d.data_dir.join("huddle.db")).expect("open the file");
    lock.execute_batch("begin immediate")
        .expect("take the write lock");
    // Four writes take the team's queue; eight wait for a slot, in order.
    let writes: Vec<_> = (0..12)
        .map(|i| {
            let coordinator = coordinator.clone();
            tokio::spawn(async move {
                coordinator
                    .post(
                        &coordinator.t("/messages"),
                        json!({"to": "*", "type": "status", "summary": format!("write {i}")}),
                    )
                    .await
                    .status
                    .as_u16()
            })
        })
        .collect();
    eventually(30, "eight writes waiting for a slot", || async {
        unsent(&d).await >= 8.0
    })
    .await;
    let beat = {
        let holder = holder.clone();
        tokio::spawn(async move {
            holder
                .post(
                    &holder.t("/tasks/TEST-001/heartbeat"),
                    json!({"leaseMs": 2500}),
                )
                .await
        })
    };
    eventually(30, "the heartbeat waiting behind them", || async {
        unsent(&d).await >= 9.0
    })
    .await;
    assert!(
        tokio::time::Instant::now() < lease_ends,
        "the heartbeat arrived before the lease's end (the set-up took longer than the lease)"
    );
    // The stall lasts past the lease's end (and well within the writer's 5 s busy timeout).
    tokio::time::sleep_until(lease_ends + Duration::from_millis(1000)).await;
    lock.execute_batch("commit")
        .expect("release the write lock");

    let beat = beat.await.unwrap();
    assert_eq!(beat.status, 200, "the heartbeat was in time: {}", beat.body);
    for write in writes {
        assert_eq!(write.await.unwrap(), 201);
    }
    let task = still_held(&coordinator).await;
    assert_eq!(task.body["attempts"], 0, "no expiry: {}", task.body);
}

/// `huddle_writer_unsent` from `/metrics` (0 before it is first set).
async fn unsent(d: &TestDaemon) -> f64 {
    d.metric("huddle_writer_unsent").await
}

/// A stall past the writer's 5 s busy timeout answers the queued writes 503, heartbeats
/// included, so a holder cannot renew through it. When writes resume, the leases that were live
/// at the last commit before the stall are renewed first (as after a PostgreSQL outage), so the
/// sweep queued during the stall — judged as of a time after the lease's end — does not hand
/// the task on. The holder waits a second after a refused heartbeat, as a client backing off
/// would, so that sweep is ahead of its next heartbeat.
#[tokio::test]
async fn a_lease_survives_a_stall_that_refused_its_heartbeats() {
    let d = TestDaemon::start_with(|s| {
        s.storage.backend = huddle_daemon::config::Backend::Sqlite;
        s.tasks.lease_sweep_ms = 20;
        s.tasks.default_lease_ms = 30_000;
    })
    .await;
    let (coordinator, holder) = one_task_and_its_holder(&d).await;
    holder
        .claim(json!({"leaseMs": 1500}))
        .await
        .expect("claimed");

    let stop = Arc::new(AtomicBool::new(false));
    let (answered_tx, mut answered) = tokio::sync::mpsc::unbounded_channel();
    let beats = {
        let (holder, stop) = (holder.clone(), stop.clone());
        tokio::spawn(async move {
            let mut statuses = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let status = holder
                    .post(
                        &holder.t("/tasks/TEST-001/heartbeat"),
                        json!({"leaseMs": 1500}),
                    )
                    .await
                    .status
                    .as_u16();
                statuses.push(status);
                let _ = answered_tx.send(status);
                let pause = if status == 200 { 200 } else { 1000 };
                tokio::time::sleep(Duration::from_millis(pause)).await; // the client's cadence
            }
            statuses
        })
    };

    answered.recv().await.expect("a first heartbeat");
    let lock = rusqlite::Connection::open(d.data_dir.join("huddle.db")).expect("open the file");
    lock.execute_batch("begin immediate")
        .expect("take the write lock");
    // Held until a heartbeat has been refused (the writer gave up after 5 s), then a little
    // longer, so the sweep sent after that refusal queues before the next heartbeat.
    loop {
        let status = answered.recv().await.expect("a heartbeat during the stall");
        if status == 503 {
            break;
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await; // the stall goes on
    lock.execute_batch("commit")
        .expect("release the write lock");
    // Two accepted heartbeats after the stall (or one refused as no longer the holder's), then
    // stop.
    let mut accepted = 0;
    while accepted < 2 {
        match answered.recv().await.expect("a heartbeat after the stall") {
            200 => accepted += 1,
            409 => break,
            _ => {}
        }
    }
    stop.store(true, Ordering::Relaxed);
    let statuses = beats.await.unwrap();
    assert!(
        statuses.contains(&503),
        "the stall refused heartbeats: {statuses:?}"
    );

    let task = still_held(&coordinator).await;
    assert_eq!(task.body["attempts"], 0, "no expiry: {}", task.body);
}

/// Team `qa` with task TEST-001 and the tester `holder` (not yet holding it).
async fn one_task_and_its_holder(d: &TestDaemon) -> (Api, Api) {
    let coordinator = d.team("qa").await;
    coordinator
        .post(
            &coordinator.t("/tasks"),
            json!({"id": "TEST-001", "subject": "long"}),
        )
        .await
        .expect_status(201);
    let holder = d.agent("qa", "holder", "tester").await;
    (coordinator, holder)
}

/// TEST-001 as the coordinator reads it, asserted still in progress with `holder`.
async fn still_held(coordinator: &Api) -> huddle_tests::Reply {
    let task = coordinator
        .get(&coordinator.t("/tasks/TEST-001"))
        .await
        .expect_status(200);
    assert_eq!(task.body["status"], "in_progress", "{}", task.body);
    assert_eq!(task.body["claimedBy"], "holder", "{}", task.body);
    task
}
