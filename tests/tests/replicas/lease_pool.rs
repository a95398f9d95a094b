//! A heartbeat reaching a replica whose connection pool is tied up by team writes is still
//! marked at once, so another replica's sweep leaves its lease alone.
//!
//! Replica A has a pool of 3 (its LISTEN connection and two batch runners of the team); this
//! test locks the rows of two tasks whose completions A then runs, one per runner, each
//! holding a pooled connection while it waits. A heartbeat arriving then cannot get a pooled
//! connection until they finish, and A waits for one as long as its acquire timeout allows
//! (two minutes here). The mark it sets for other replicas' sweeps goes on a connection of its
//! own. B's sweep then judges the lease: once B has expired a signal task whose lease ran out
//! after the heartbeated one, the heartbeated lease must still be its holder's.

use super::{lock_rows, named_replica, team, until};
use serde_json::json;
use sqlx::{Connection, PgConnection};

/// Whether `n` or more backends of the replica named `$1` wait for a lock.
fn lock_waiters(n: usize) -> String {
    format!(
        "select count(*) >= {n} from pg_stat_activity
         where datname = current_database() and application_name = $1
           and wait_event_type = 'Lock'"
    )
}

/// Long enough for the setup below to run well inside it.
const LEASE_MS: i64 = 30_000;

#[tokio::test]
async fn a_heartbeat_is_marked_while_the_replicas_pool_is_tied_up() {
    let url = huddle_tests::pg::fresh_database().await;
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut a = named_replica(
        &url,
        dir_a.path(),
        "pool_a",
        &[
            ("HUDDLE_STORAGE_POOL_SIZE", "3"),
            ("HUDDLE_STORAGE_BATCHES_PER_TEAM", "2"),
            ("HUDDLE_STORAGE_ACQUIRE_TIMEOUT_MS", "120000"),
            // Only B sweeps.
            ("HUDDLE_TASKS_LEASE_SWEEP_MS", "3600000"),
            ("HUDDLE_TASKS_MIN_LEASE_MS", "50"),
        ],
    );
    let mut b = named_replica(
        &url,
        dir_b.path(),
        "pool_b",
        &[
            ("HUDDLE_TASKS_LEASE_SWEEP_MS", "50"),
            ("HUDDLE_TASKS_MIN_LEASE_MS", "50"),
        ],
    );
    let agents = team(
        &a.url,
        &[("coordinator", "coordinator"), ("tester", "tester")],
    )
    .await;
    let (coordinator, tester) = (&agents[0], &agents[1]);
    for id in ["BEAT-001", "STUCK-001", "STUCK-002", "SIGNAL-001"] {
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
    for _ in 0..2 {
        tester
            .claim(json!({"prefixes": ["STUCK"], "leaseMs": 600_000}))
            .await
            .expect("a STUCK task is claimed");
    }
    tester
        .claim(json!({"prefixes": ["SIGNAL"], "leaseMs": LEASE_MS}))
        .await
        .expect("SIGNAL-001 is claimed");

    // Both STUCK rows locked here; A's two completions of them each hold a runner and a
    // pooled connection while they wait.
    let mut db = PgConnection::connect(&url).await.unwrap();
    let mut row_locks = lock_rows(&url, &["STUCK-001", "STUCK-002"]).await;
    // One after the other: sent together, one runner could take both into one batch.
    let mut completions = Vec::new();
    for (n, id) in ["STUCK-001", "STUCK-002"].into_iter().enumerate() {
        let tester = tester.clone();
        completions.push(tokio::spawn(async move {
            tester
                .post(&tester.t(&format!("/tasks/{id}/complete")), json!({}))
                .await
        }));
        until(
            &mut db,
            &format!("{} completion(s) wait for their rows on A", n + 1),
            &lock_waiters(n + 1),
            "pool_a",
        )
        .await;
    }

    let heartbeat = {
        let tester = tester.clone();
        tokio::spawn(async move {
            tester
                .post(
                    &tester.t("/tasks/BEAT-001/heartbeat"),
                    json!({"leaseMs": 120_000}),
                )
                .await
        })
    };
    // Marked while the lease is live, though A's pool has no connection to give.
    until(
        &mut db,
        "A marks the heartbeat on a connection of its own",
        "select heard_until is not null and status = 'in_progress' and $1::text is not null
         from tasks where id = 'BEAT-001'",
        "-",
    )
    .await;
    // B expires SIGNAL-001, whose lease ran out after BEAT-001's: that sweep judged BEAT-001.
    until(
        &mut db,
        "B's sweep expires SIGNAL-001",
        "select $1::text is not null and status = 'pending' from tasks where id = 'SIGNAL-001'",
        "-",
    )
    .await;

    sqlx::query("rollback")
        .execute(&mut row_locks)
        .await
        .unwrap();
    for completion in completions {
        completion.await.unwrap().expect_status(200);
    }
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
    a.kill9();
    b.kill9();
}

/// Marks skip a row another transaction holds: heartbeats of tasks whose rows are locked
/// (their writes stuck) must not take the marks' connections from every other heartbeat.
#[tokio::test]
async fn a_mark_never_waits_on_a_locked_row() {
    let url = huddle_tests::pg::fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let mut a = named_replica(
        &url,
        dir.path(),
        "marks_a",
        &[
            ("HUDDLE_STORAGE_BATCHES_PER_TEAM", "4"),
            ("HUDDLE_TASKS_LEASE_SWEEP_MS", "3600000"),
        ],
    );
    let agents = team(
        &a.url,
        &[("coordinator", "coordinator"), ("tester", "tester")],
    )
    .await;
    let (coordinator, tester) = (&agents[0], &agents[1]);
    let ids = ["BEAT-001", "BEAT-002", "BEAT-003", "BEAT-004"];
    for id in ids {
        coordinator
            .post(&coordinator.t("/tasks"), json!({"id": id, "subject": id}))
            .await
            .expect_status(201);
        tester
            .claim(json!({"prefixes": ["BEAT"], "leaseMs": 600_000}))
            .await
            .expect("a BEAT task is claimed");
    }
    // Three rows locked here: more than the marks have connections.
    let mut db = PgConnection::connect(&url).await.unwrap();
    let mut row_locks = lock_rows(&url, &ids[..3]).await;
    let beat = |id: &'static str| {
        let tester = tester.clone();
        tokio::spawn(async move {
            tester
                .post(
                    &tester.t(&format!("/tasks/{id}/heartbeat")),
                    json!({"leaseMs": 600_000}),
                )
                .await
        })
    };
    let mut beats: Vec<_> = ids[..3].iter().map(|id| beat(id)).collect();
    // Their heartbeats run in batches that wait for the rows.
    until(
        &mut db,
        "the three heartbeats wait for their rows",
        &lock_waiters(3),
        "marks_a",
    )
    .await;
    beats.push(beat("BEAT-004"));
    until(
        &mut db,
        "BEAT-004's heartbeat is marked",
        "select heard_until is not null and $1::text is not null from tasks where id = 'BEAT-004'",
        "-",
    )
    .await;
    sqlx::query("rollback")
        .execute(&mut row_locks)
        .await
        .unwrap();
    for beat in beats {
        beat.await.unwrap().expect_status(200);
    }
    a.kill9();
}
