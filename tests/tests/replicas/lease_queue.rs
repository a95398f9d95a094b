//! A heartbeat waiting in one replica's queue keeps its lease against another replica's sweep.
//!
//! Replica A here runs a team's writes one batch at a time (`batches_per_team = 1`); a heartbeat A receives while a write of
//! the team is still running waits behind it, in A's memory. Replica B's sweep cannot see A's
//! queue. Here B's sweep judges the lease while A's heartbeat is still queued: the heartbeat
//! arrived while its lease was live, so the lease must still be its holder's after the sweep
//! and the heartbeat have both run.
//!
//! The order is forced with locks, not timing: this test locks the row of another task the
//! tester holds; A's completion of that task waits for it, and A's heartbeat waits behind that
//! completion. B's sweep takes no lock this test holds: once B has expired a signal task whose
//! lease ran out after the heartbeated one, B has judged the heartbeated lease too. Only then
//! does the test let A's completion, and so A's heartbeat, go on.

use super::{named_replica, stuck_completion, team, until};
use serde_json::json;
use sqlx::{Connection, PgConnection};

/// Long enough for the setup below to run well inside it.
const LEASE_MS: i64 = 5000;

/// The lease the queued heartbeat asks for: it still runs when B's sweep judges the first
/// lease, however long the machine takes to get there (a lease lapses once its heartbeat's
/// own lease has, queued or not).
const HEARD_LEASE_MS: i64 = 120_000;

#[tokio::test]
async fn a_heartbeat_queued_on_one_replica_keeps_its_lease_against_another_replicas_sweep() {
    let url = huddle_tests::pg::fresh_database().await;
    let start = |dir: &std::path::Path, name: &str, sweep_ms: &str| {
        named_replica(
            &url,
            dir,
            name,
            &[
                ("HUDDLE_TASKS_LEASE_SWEEP_MS", sweep_ms),
                ("HUDDLE_TASKS_MIN_LEASE_MS", "50"),
                // One batch of the team at a time, so the heartbeat queues behind A's stuck
                // completion (with more, it would run beside it and prove nothing here).
                ("HUDDLE_STORAGE_BATCHES_PER_TEAM", "1"),
            ],
        )
    };
    // Only B sweeps (A's own sweeps queue behind its heartbeats anyway).
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut a = start(dir_a.path(), "replica_a", "3600000");
    let mut b = start(dir_b.path(), "replica_b", "50");

    let agents = team(
        &a.url,
        &[("coordinator", "coordinator"), ("tester", "tester")],
    )
    .await;
    let (coordinator, tester) = (&agents[0], &agents[1]);
    // BEAT-001 is heartbeated; STUCK-001's completion holds A's queue; SIGNAL-001, claimed
    // after BEAT-001 with the same lease, runs out after it.
    for id in ["BEAT-001", "STUCK-001", "SIGNAL-001"] {
        coordinator
            .post(&coordinator.t("/tasks"), json!({"id": id, "subject": id}))
            .await
            .expect_status(201);
    }
    let held = tester
        .claim(json!({"prefixes": ["BEAT"], "leaseMs": LEASE_MS}))
        .await
        .expect("BEAT-001 is claimed");
    assert_eq!(held["id"], "BEAT-001");
    tester
        .claim(json!({"prefixes": ["STUCK"], "leaseMs": 600_000}))
        .await
        .expect("STUCK-001 is claimed");
    tester
        .claim(json!({"prefixes": ["SIGNAL"], "leaseMs": LEASE_MS}))
        .await
        .expect("SIGNAL-001 is claimed");

    // STUCK-001's row, locked here: A's completion of it waits, and A's next batch of the
    // team (the heartbeat below) waits behind that completion.
    let mut db = PgConnection::connect(&url).await.unwrap();
    let (mut row_lock, stuck) =
        stuck_completion(&url, &mut db, tester, "STUCK-001", "replica_a").await;

    // The heartbeat reaches A while the lease is live and queues behind that completion.
    let (live,): (bool,) = sqlx::query_as(
        "select lease_expires_at > (extract(epoch from clock_timestamp()) * 1000)::bigint
         from tasks where id = 'BEAT-001'",
    )
    .fetch_one(&mut db)
    .await
    .unwrap();
    assert!(
        live,
        "the setup outlasted the lease: the heartbeat would be late"
    );
    let heartbeat = {
        let tester = tester.clone();
        tokio::spawn(async move {
            tester
                .post(
                    &tester.t("/tasks/BEAT-001/heartbeat"),
                    json!({"leaseMs": HEARD_LEASE_MS}),
                )
                .await
        })
    };

    // B's sweep expires SIGNAL-001, whose lease ran out after BEAT-001's: that sweep judged
    // BEAT-001's lease too, while A's heartbeat was still queued.
    until(
        &mut db,
        "B's sweep expires SIGNAL-001",
        "select $1::text is not null and status = 'pending' from tasks where id = 'SIGNAL-001'",
        "-",
    )
    .await;
    let (still_queued,): (bool,) =
        sqlx::query_as("select status = 'in_progress' from tasks where id = 'STUCK-001'")
            .fetch_one(&mut db)
            .await
            .unwrap();
    assert!(still_queued, "A's completion was still waiting");

    // A's completion goes on, then A's heartbeat.
    sqlx::query("rollback")
        .execute(&mut row_lock)
        .await
        .unwrap();
    stuck.await.unwrap().expect_status(200);
    let beat = heartbeat.await.unwrap();
    assert_eq!(
        beat.status.as_u16(),
        200,
        "the heartbeat lost its lease to B's sweep: {}",
        beat.body
    );
    let task = coordinator.get(&coordinator.t("/tasks/BEAT-001")).await;
    assert_eq!(task.body["status"], "in_progress", "{}", task.body);
    assert_eq!(task.body["claimedBy"], "tester");
    assert_eq!(
        task.body["attempts"], held["attempts"],
        "no attempt was used"
    );
    let events = coordinator
        .get(&coordinator.t("/tasks/BEAT-001/events"))
        .await;
    assert!(
        !events.body.to_string().contains("task.expired"),
        "the lease was expired: {}",
        events.body
    );

    // The mark is the holder's alone: once the heartbeat's lease lapses, B expires it.
    coordinator
        .post(
            &coordinator.t("/tasks/BEAT-001/heartbeat"),
            json!({"leaseMs": 50}),
        )
        .await
        .expect_status(200);
    huddle_tests::eventually(60, "B expires the shortened lease", || {
        let coordinator = coordinator.clone();
        async move {
            let t = coordinator.get(&coordinator.t("/tasks/BEAT-001")).await;
            t.body["status"] == "pending"
        }
    })
    .await;
    a.kill9();
    b.kill9();
}
