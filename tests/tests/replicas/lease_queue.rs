//! A heartbeat waiting in one replica's queue keeps its lease against another replica's sweep.
//!
//! Replica A runs a team's writes one batch at a time; a heartbeat A receives while a write of
//! the team waits for the team's lock waits behind it, in A's memory. Replica B's sweep cannot
//! see A's queue. Here B's sweep is made to get the team's lock before A's heartbeat: the
//! heartbeat arrived while its lease was live, so the lease must still be its holder's after
//! the sweep and the heartbeat have both run.
//!
//! The order is forced with locks, not timing: this test holds the team's row lock; A's write
//! waits for it first (holding PostgreSQL's tuple lock, ahead of every later waiter); B's sweep
//! waits behind A's write; the test then ends A's write's connection, so B's sweep holds the
//! tuple lock and A's heartbeat, its next batch, queues behind B.

use huddle_tests::process::HuddledProcess;
use huddle_tests::Api;
use serde_json::json;
use sqlx::{Connection, PgConnection};
use std::time::Duration;

const ADMIN: &str = "lease-queue-admin-token-0123456789abcdef";

/// Long enough for the setup below to run well inside it.
const LEASE_MS: i64 = 5000;

/// Whether a backend of `replica` (its `application_name`) is waiting for a lock.
const WAITS_FOR_A_LOCK: &str = "select exists(select 1 from pg_stat_activity
     where datname = current_database() and application_name = $1 and wait_event_type = 'Lock')";

/// Whether TEST-001's lease has run out by the database's clock (`$1` unused).
const LEASE_RAN_OUT: &str = "select $1::text is not null and lease_expires_at
     <= (extract(epoch from clock_timestamp()) * 1000)::bigint from tasks where id = 'TEST-001'";

/// Polls the database until `sql` (one text parameter, `arg`) answers true.
async fn until(db: &mut PgConnection, what: &str, sql: &str, arg: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let answer: bool = sqlx::query_scalar(sql)
            .bind(arg)
            .fetch_one(&mut *db)
            .await
            .unwrap();
        if answer {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_heartbeat_queued_on_one_replica_keeps_its_lease_against_another_replicas_sweep() {
    let url = huddle_tests::pg::fresh_database().await;
    let start = |dir: &std::path::Path, name: &str, sweep_ms: &str| {
        let db_url = format!("{url}?application_name={name}");
        HuddledProcess::start(
            dir,
            &[
                ("HUDDLE_DATABASE_URL", db_url.as_str()),
                ("HUDDLE_ADMIN_TOKEN", ADMIN),
                ("HUDDLE_TASKS_LEASE_SWEEP_MS", sweep_ms),
                ("HUDDLE_TASKS_MIN_LEASE_MS", "50"),
            ],
        )
        .unwrap_or_else(|e| panic!("replica {name} did not start: {e}"))
    };
    // Only B sweeps (A's own sweeps queue behind its heartbeats anyway).
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut a = start(dir_a.path(), "replica_a", "3600000");
    let mut b = start(dir_b.path(), "replica_b", "50");

    let admin = Api::new(&a.url, ADMIN);
    admin
        .post("/v1/teams", json!({"name": "qa"}))
        .await
        .expect_status(201);
    let mut agents = Vec::new();
    for (name, role) in [("coordinator", "coordinator"), ("tester", "tester")] {
        let r = admin
            .post("/v1/teams/qa/agents", json!({"name": name, "role": role}))
            .await
            .expect_status(201);
        agents.push(Api::new(&a.url, r.body["token"].as_str().unwrap()).in_team("qa"));
    }
    let (coordinator, tester) = (&agents[0], &agents[1]);
    coordinator
        .post(
            &coordinator.t("/tasks"),
            json!({"id": "TEST-001", "subject": "heartbeated"}),
        )
        .await
        .expect_status(201);
    let held = tester
        .claim(json!({"prefixes": ["TEST"], "leaseMs": LEASE_MS}))
        .await
        .expect("TEST-001 is claimed");
    assert_eq!(held["id"], "TEST-001");

    // The team's lock, held here; a write on A waits for it, and A's later writes of the team
    // wait behind that one in A's queue.
    let mut db = PgConnection::connect(&url).await.unwrap();
    let mut team_lock = PgConnection::connect(&url).await.unwrap();
    sqlx::query("begin").execute(&mut team_lock).await.unwrap();
    sqlx::query("select 1 from teams where name = 'qa' for update")
        .execute(&mut team_lock)
        .await
        .unwrap();
    let stuck = {
        let coordinator = coordinator.clone();
        tokio::spawn(async move {
            let post = json!({"to": "*", "type": "impl_progress", "summary": "stuck"});
            coordinator.post(&coordinator.t("/messages"), post).await
        })
    };
    until(
        &mut db,
        "A's write waits for the team's lock",
        WAITS_FOR_A_LOCK,
        "replica_a",
    )
    .await;

    // The heartbeat reaches A while the lease is live and queues behind that write.
    let (live,): (bool,) = sqlx::query_as(
        "select lease_expires_at > (extract(epoch from clock_timestamp()) * 1000)::bigint
         from tasks where id = 'TEST-001'",
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
                    &tester.t("/tasks/TEST-001/heartbeat"),
                    json!({"leaseMs": LEASE_MS}),
                )
                .await
        })
    };

    // The lease runs out by the database's clock, and B's sweep waits for the team's lock.
    until(&mut db, "the lease's deadline passes", LEASE_RAN_OUT, "-").await;
    until(
        &mut db,
        "B's sweep waits for the team's lock",
        WAITS_FOR_A_LOCK,
        "replica_b",
    )
    .await;

    // A's waiting write loses its connection (it is answered 503): B's sweep is now first in
    // line, and A's heartbeat, A's next batch, waits behind it.
    let ended: i64 = sqlx::query_scalar(
        "select count(*) from (select pg_terminate_backend(pid) from pg_stat_activity
         where datname = current_database() and application_name = 'replica_a'
           and wait_event_type = 'Lock') ended",
    )
    .fetch_one(&mut db)
    .await
    .unwrap();
    assert_eq!(ended, 1, "one write of A was waiting");
    stuck.await.unwrap().expect_status(503);
    until(
        &mut db,
        "A's heartbeat waits behind B's sweep",
        WAITS_FOR_A_LOCK,
        "replica_a",
    )
    .await;

    // The team's lock goes to B's sweep, then to A's heartbeat.
    sqlx::query("rollback")
        .execute(&mut team_lock)
        .await
        .unwrap();
    let beat = heartbeat.await.unwrap();
    assert_eq!(
        beat.status.as_u16(),
        200,
        "the heartbeat lost its lease to B's sweep: {}",
        beat.body
    );
    let task = coordinator.get(&coordinator.t("/tasks/TEST-001")).await;
    assert_eq!(task.body["status"], "in_progress", "{}", task.body);
    assert_eq!(task.body["claimedBy"], "tester");
    assert_eq!(
        task.body["attempts"], held["attempts"],
        "no attempt was used"
    );
    let events = coordinator
        .get(&coordinator.t("/tasks/TEST-001/events"))
        .await;
    assert!(
        !events.body.to_string().contains("task.expired"),
        "the lease was expired: {}",
        events.body
    );

    // The mark is the holder's alone: once the heartbeat's lease lapses, B expires it.
    coordinator
        .post(
            &coordinator.t("/tasks/TEST-001/heartbeat"),
            json!({"leaseMs": 50}),
        )
        .await
        .expect_status(200);
    huddle_tests::eventually(60, "B expires the shortened lease", || {
        let coordinator = coordinator.clone();
        async move {
            let t = coordinator.get(&coordinator.t("/tasks/TEST-001")).await;
            t.body["status"] == "pending"
        }
    })
    .await;
    a.kill9();
    b.kill9();
}
