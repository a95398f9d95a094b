//! A worker's completion judges its task on the row as it finds it after waiting for it
//! (`store/postgres/completions.rs`: locked by primary key, then updated where it lies). The
//! test holds the row and changes it while the completion waits: a new version of the row (a
//! longer lease, as a heartbeat writes) is completed once; a task handed to another agent
//! meanwhile is refused and left with that agent.
//!
//! The order is forced with a lock, not timing: the completion is seen waiting for the row
//! (`pg_stat_activity`) before the change is committed.

use super::{named_replica, stuck_completion, team};
use serde_json::json;
use sqlx::{Connection, PgConnection};

#[tokio::test]
async fn a_completion_judges_the_row_it_waited_for_as_changed_meanwhile() {
    let url = huddle_tests::pg::fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let mut replica = named_replica(&url, dir.path(), "recheck_replica", &[]);
    let agents = team(
        &replica.url,
        &[("coordinator", "coordinator"), ("tester", "tester")],
    )
    .await;
    let (coordinator, tester) = (&agents[0], &agents[1]);
    for id in ["TEST-001", "TEST-002"] {
        coordinator
            .post(&coordinator.t("/tasks"), json!({"id": id, "subject": id}))
            .await
            .expect_status(201);
        tester
            .claim(json!({"prefixes": ["TEST"], "leaseMs": 600_000}))
            .await
            .unwrap_or_else(|| panic!("{id} is claimed"));
    }
    let mut db = PgConnection::connect(&url).await.unwrap();

    // A new version of TEST-001's row (lease and version moved) while its completion waits.
    let (mut row_lock, stuck) =
        stuck_completion(&url, &mut db, tester, "TEST-001", "recheck_replica").await;
    sqlx::query(
        "update tasks set lease_expires_at = lease_expires_at + 1000, version = version + 1
         where id = 'TEST-001'",
    )
    .execute(&mut row_lock)
    .await
    .unwrap();
    sqlx::query("commit").execute(&mut row_lock).await.unwrap();
    let done = stuck.await.unwrap().expect_status(200);
    assert_eq!(done.body["status"], "completed", "{}", done.body);
    // Created 1, claimed 2, moved here 3, completed 4: the new version, completed once.
    assert_eq!(done.body["version"], 4, "{}", done.body);

    // TEST-002 handed to another agent while its completion waits: refused, left as it is.
    let (mut row_lock, stuck) =
        stuck_completion(&url, &mut db, tester, "TEST-002", "recheck_replica").await;
    sqlx::query("update tasks set claimed_by = 'someone-else' where id = 'TEST-002'")
        .execute(&mut row_lock)
        .await
        .unwrap();
    sqlx::query("commit").execute(&mut row_lock).await.unwrap();
    let refused = stuck.await.unwrap().expect_status(409);
    assert_eq!(
        refused.body["error"]["code"], "not_holder",
        "{}",
        refused.body
    );
    let task = coordinator.get(&coordinator.t("/tasks/TEST-002")).await;
    assert_eq!(task.body["status"], "in_progress", "{}", task.body);
    assert_eq!(task.body["claimedBy"], "someone-else", "{}", task.body);

    let completed: Vec<String> =
        sqlx::query_scalar("select type from events where type = 'task.completed'")
            .fetch_all(&mut db)
            .await
            .unwrap();
    assert_eq!(completed.len(), 1, "one completion recorded: {completed:?}");
    replica.stop();
}
