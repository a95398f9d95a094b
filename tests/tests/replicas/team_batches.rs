//! One replica runs several of a team's batches at once (`[storage] batches_per_team`): a
//! completion stuck on a task row does not hold up the team's other claims and completions.
//!
//! The order is forced with a lock, not timing: the test locks a task row, so the replica's
//! completion of that task waits for it inside its batch. With one batch per team at a time,
//! every later write of the team would queue behind that batch; here another claim and
//! completion of the same team must be answered while the row is still locked.

use super::{named_replica, stuck_completion, team};
use serde_json::json;
use sqlx::{Connection, PgConnection};
use std::time::Duration;

#[tokio::test]
async fn a_completion_stuck_on_a_row_does_not_hold_up_the_teams_other_writes() {
    let url = huddle_tests::pg::fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let mut replica = named_replica(
        &url,
        dir.path(),
        "batches_replica",
        &[("HUDDLE_STORAGE_BATCHES_PER_TEAM", "4")],
    );

    let agents = team(
        &replica.url,
        &[("coordinator", "coordinator"), ("tester", "tester")],
    )
    .await;
    let (coordinator, tester) = (&agents[0], &agents[1]);
    for id in ["STUCK-001", "TEST-001", "TEST-002"] {
        coordinator
            .post(&coordinator.t("/tasks"), json!({"id": id, "subject": id}))
            .await
            .expect_status(201);
    }
    tester
        .claim(json!({"prefixes": ["STUCK"], "leaseMs": 600_000}))
        .await
        .expect("STUCK-001 is claimed");

    // STUCK-001's row, locked here: the replica's completion of it waits in its batch.
    let mut db = PgConnection::connect(&url).await.unwrap();
    let (mut row_lock, stuck) =
        stuck_completion(&url, &mut db, tester, "STUCK-001", "batches_replica").await;

    // The team's other writes go on meanwhile: a claim, its completion, another claim.
    let others = async {
        let first = tester
            .claim(json!({"prefixes": ["TEST"], "leaseMs": 600_000}))
            .await
            .expect("TEST-001 is claimed");
        tester
            .post(
                &tester.t(&format!(
                    "/tasks/{}/complete",
                    first["id"].as_str().unwrap()
                )),
                json!({}),
            )
            .await
            .expect_status(200);
        tester
            .claim(json!({"prefixes": ["TEST"], "leaseMs": 600_000}))
            .await
            .expect("TEST-002 is claimed")
    };
    let second = tokio::time::timeout(Duration::from_secs(60), others)
        .await
        .expect("the team's other writes waited behind the stuck completion's batch");
    assert_eq!(second["id"], "TEST-002");
    assert!(
        !stuck.is_finished(),
        "STUCK-001's completion was still waiting"
    );

    // The row goes free; the stuck completion ends as it would have alone.
    sqlx::query("rollback")
        .execute(&mut row_lock)
        .await
        .unwrap();
    stuck.await.unwrap().expect_status(200);
    let task = coordinator.get(&coordinator.t("/tasks/STUCK-001")).await;
    assert_eq!(task.body["status"], "completed", "{}", task.body);
    let seqs: Vec<i64> = sqlx::query_scalar("select seq from events order by seq")
        .fetch_all(&mut db)
        .await
        .unwrap();
    let gapless: Vec<i64> = (1..=seqs.len() as i64).collect();
    assert_eq!(seqs, gapless, "the team's events are numbered without gaps");
    replica.stop();
}
