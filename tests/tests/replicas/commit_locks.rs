//! The statement a write commits with (events, sequences, usage) takes the team's row and then
//! the usage row of the commit: it never waits on the usage slots the triggers hold from the
//! middle of another transaction, and when PostgreSQL still breaks a deadlock by rolling that
//! statement back, the daemon runs the batch again instead of answering 503.

use super::{named_replica, team, until, WAITS_FOR_A_LOCK};
use huddle_tests::Api;
use serde_json::json;
use sqlx::{Connection, PgConnection};
use std::time::Duration;

/// A replica named `name` on a fresh database with a team of a coordinator and a tester, the
/// tester holding TEST-001; returns the replica, the database URL, the tester and the team's id.
async fn one_claimed_task(
    name: &str,
    url_options: &str,
    dir: &std::path::Path,
) -> (huddle_tests::process::HuddledProcess, String, Api, i64) {
    let url = huddle_tests::pg::fresh_database().await;
    let replica = named_replica(&format!("{url}{url_options}"), dir, name, &[]);
    let agents = team(
        &replica.url,
        &[("coordinator", "coordinator"), ("tester", "tester")],
    )
    .await;
    let (coordinator, tester) = (&agents[0], agents[1].clone());
    coordinator
        .post(
            &coordinator.t("/tasks"),
            json!({"id": "TEST-001", "subject": "one"}),
        )
        .await
        .expect_status(201);
    tester
        .claim(json!({"prefixes": ["TEST"], "leaseMs": 600_000}))
        .await
        .expect("TEST-001 is claimed");
    let mut db = PgConnection::connect(&url).await.unwrap();
    let team_id: i64 = sqlx::query_scalar("select id from teams where name = 'qa'")
        .fetch_one(&mut db)
        .await
        .unwrap();
    (replica, url, tester, team_id)
}

/// The team's completed tasks as the usage slots count them: (all slots, slot 64).
async fn completed(db: &mut PgConnection, team_id: i64) -> (i64, i64) {
    sqlx::query_as(
        "select coalesce(sum(tasks_completed), 0)::bigint,
                coalesce(sum(tasks_completed) filter (where slot = 64), 0)::bigint
         from team_usage where team_id = $1",
    )
    .bind(team_id)
    .fetch_one(db)
    .await
    .unwrap()
}

#[tokio::test]
async fn a_completion_commits_while_another_transaction_holds_every_trigger_slot() {
    let dir = tempfile::tempdir().unwrap();
    let (_replica, url, tester, team_id) = one_claimed_task("slots_a", "", dir.path()).await;
    // What a message post's trigger does mid-transaction, on every slot a backend can have:
    // the completion's commit below takes the team's row, and must not then wait on one of
    // these (a post holding one and wanting the team's row would close a deadlock).
    let mut holder = PgConnection::connect(&url).await.unwrap();
    sqlx::query("begin").execute(&mut holder).await.unwrap();
    sqlx::query(
        "insert into team_usage as u (team_id, slot)
         select $1, g::smallint from generate_series(0, 63) g
         on conflict (team_id, slot) do update set messages = u.messages",
    )
    .bind(team_id)
    .execute(&mut holder)
    .await
    .unwrap();
    let done = tokio::time::timeout(
        Duration::from_secs(60),
        tester.post(&tester.t("/tasks/TEST-001/complete"), json!({})),
    )
    .await
    .expect("the completion committed while the trigger slots were held");
    done.expect_status(200);
    sqlx::query("rollback").execute(&mut holder).await.unwrap();
    let mut db = PgConnection::connect(&url).await.unwrap();
    assert_eq!(completed(&mut db, team_id).await, (1, 1));
}

#[tokio::test]
async fn a_batch_whose_commit_loses_a_deadlock_runs_again() {
    let dir = tempfile::tempdir().unwrap();
    // The replica's backends look for a deadlock 5 s into a wait; this test's session only
    // after 10 minutes: the replica's commit is the one PostgreSQL rolls back.
    let (_replica, url, tester, team_id) = one_claimed_task(
        "deadlock_a",
        "?options=-c%20deadlock_timeout%3D5s",
        dir.path(),
    )
    .await;
    let mut db = PgConnection::connect(&url).await.unwrap();
    let mut holder = PgConnection::connect(&url).await.unwrap();
    sqlx::query("set deadlock_timeout = '10min'")
        .execute(&mut holder)
        .await
        .unwrap();
    sqlx::query("begin").execute(&mut holder).await.unwrap();
    sqlx::query(
        "insert into team_usage as u (team_id, slot) values ($1, 64)
         on conflict (team_id, slot) do update set messages = u.messages",
    )
    .bind(team_id)
    .execute(&mut holder)
    .await
    .unwrap();
    let completion = {
        let tester = tester.clone();
        tokio::spawn(async move {
            tester
                .post(&tester.t("/tasks/TEST-001/complete"), json!({}))
                .await
        })
    };
    // The commit statement holds the team's row and waits for the usage row held here.
    until(
        &mut db,
        "the completion's commit waits for the usage row",
        WAITS_FOR_A_LOCK,
        "deadlock_a",
    )
    .await;
    // Wanting the team's row closes the cycle; PostgreSQL rolls the replica's statement back
    // and this one goes on.
    sqlx::query("update teams set event_seq = event_seq where id = $1")
        .bind(team_id)
        .execute(&mut holder)
        .await
        .expect("the replica's commit, not this session, loses the deadlock");
    sqlx::query("rollback").execute(&mut holder).await.unwrap();
    let answer = completion.await.unwrap();
    answer.expect_status(200);
    // Statistics reach pg_stat_database when the backend next reports them.
    until(
        &mut db,
        "PostgreSQL counts the deadlock it broke",
        "select deadlocks >= 1 and $1::text is not null
         from pg_stat_database where datname = current_database()",
        "deadlock_a",
    )
    .await;
    assert_eq!(completed(&mut db, team_id).await, (1, 1));
    let task = tester
        .get(&tester.t("/tasks/TEST-001"))
        .await
        .expect_status(200);
    assert_eq!(task.body["status"], "completed");
}
