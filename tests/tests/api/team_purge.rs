//! Deleting or importing a large team does not hold other teams' writes: on SQLite one writer
//! serves every team, and the team's rows go (or come) a chunk per writer job, so another
//! team's writes are answered while the deletion or import is still under way. A daemon stopped
//! midway finishes the purge at its next start. Both backends (PostgreSQL never held them).

use huddle_daemon::config::Backend;
use huddle_tests::{Api, TestDaemon};
use reqwest::Method;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// Messages of the large team: about 30 chunks of its messages, events and keys.
const MESSAGES: usize = 20_000;

async fn fill(api: &Api) {
    for start in (0..MESSAGES).step_by(500) {
        let messages: Vec<Value> = (start..start + 500)
            .map(|n| json!({"to": "*", "type": "note", "summary": format!("note {n}"), "data": {"n": n}}))
            .collect();
        api.post(&api.t("/messages/batch"), json!({ "messages": messages }))
            .await
            .expect_status(201);
    }
}

/// Writes of the victim team, one after another until `stop`; counts those answered while
/// `during` was set.
fn victim_writes(
    victim: Api,
    during: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
) -> (Arc<AtomicUsize>, tokio::task::JoinHandle<()>) {
    let answered = Arc::new(AtomicUsize::new(0));
    let counted = answered.clone();
    let handle = tokio::spawn(async move {
        let mut n = 0;
        while !stop.load(Ordering::SeqCst) {
            let started_during = during.load(Ordering::SeqCst);
            victim
                .post(
                    &victim.t("/messages"),
                    json!({"to": "*", "type": "note", "summary": format!("victim {n}")}),
                )
                .await
                .expect_status(201);
            if started_during && during.load(Ordering::SeqCst) {
                counted.fetch_add(1, Ordering::SeqCst);
            }
            n += 1;
        }
    });
    (answered, handle)
}

#[tokio::test]
async fn another_teams_writes_are_answered_while_a_large_team_is_deleted() {
    let d = TestDaemon::start().await;
    let large = d.team("large").await;
    fill(&large).await;
    let victim = d.team("victim").await;
    let (during, stop) = (
        Arc::new(AtomicBool::new(true)),
        Arc::new(AtomicBool::new(false)),
    );
    let (answered, writes) = victim_writes(victim.clone(), during.clone(), stop.clone());
    d.admin()
        .send(Method::DELETE, "/v1/teams/large", None, &[])
        .await
        .expect_status(204);
    during.store(false, Ordering::SeqCst);
    stop.store(true, Ordering::SeqCst);
    writes.await.unwrap();
    // One job for the whole deletion would let through only the few writes sent before the
    // request reached the writer (0–3 here); a chunk per job lets dozens through.
    if d.settings.storage.backend == Backend::Sqlite {
        let answered = answered.load(Ordering::SeqCst);
        assert!(
            answered >= 10,
            "only {answered} writes of another team were answered while the deletion ran"
        );
    }
    // The team is gone whole: its name is free, a new team of that name starts empty.
    let again = d.team("large").await;
    let page = again
        .get(&again.t("/messages?limit=5"))
        .await
        .expect_status(200);
    assert_eq!(
        page.body["messages"].as_array().unwrap().len(),
        0,
        "{}",
        page.body
    );
}

#[tokio::test]
async fn another_teams_writes_are_answered_while_a_large_team_is_imported() {
    let d = TestDaemon::start().await;
    let large = d.team("large").await;
    fill(&large).await;
    let file = d
        .admin()
        .send(Method::GET, "/v1/teams/large/export", None, &[])
        .await
        .expect_status(200)
        .body;
    let Value::String(file) = file else {
        panic!("an export is lines of JSON")
    };
    // Its tokens come back with the import: the original goes first.
    d.admin()
        .send(Method::DELETE, "/v1/teams/large", None, &[])
        .await
        .expect_status(204);
    let victim = d.team("victim").await;
    let (during, stop) = (
        Arc::new(AtomicBool::new(true)),
        Arc::new(AtomicBool::new(false)),
    );
    let (answered, writes) = victim_writes(victim.clone(), during.clone(), stop.clone());
    d.admin()
        .send(
            Method::POST,
            "/v1/teams/copy/import",
            Some(file.into_bytes()),
            &[],
        )
        .await
        .expect_status(201);
    during.store(false, Ordering::SeqCst);
    stop.store(true, Ordering::SeqCst);
    writes.await.unwrap();
    // The import reads and spools its file before it writes, so writes answered during the
    // request do not tell the chunks from one job; this checks that the import is whole and
    // correct with another team writing throughout.
    assert!(answered.load(Ordering::SeqCst) > 0);
    let copy = large.in_team("copy");
    let page = copy
        .get(&copy.t("/messages/search?limit=1"))
        .await
        .expect_status(200);
    assert_eq!(page.body["total"], MESSAGES as i64, "{}", page.body);
}

/// A daemon stopped after retiring a team (its rows still there) removes them at its next
/// start; the team was never listed again meanwhile.
#[tokio::test]
async fn a_deletion_cut_short_is_finished_at_the_next_start() {
    // SQLite's mechanism: PostgreSQL deletes a team in one transaction.
    let d = TestDaemon::start_with(|s| s.storage.backend = Backend::Sqlite).await;
    let large = d.team("large").await;
    fill(&large).await;
    let mut d = d;
    d.stop().await;
    // What a stop between the retiring job and the last chunk leaves.
    let db = d.data_dir.join("huddle.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "update teams set name = '~deleted-' || id where name = 'large'",
        [],
    )
    .unwrap();
    drop(conn);
    let d = d.restart().await;
    let names = d.admin().get("/v1/teams").await.expect_status(200).body;
    assert_eq!(names["teams"].as_array().unwrap().len(), 0, "{names}");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let left: i64 = conn
        .query_row("select count(*) from messages", [], |r| r.get(0))
        .unwrap();
    let teams: i64 = conn
        .query_row("select count(*) from teams", [], |r| r.get(0))
        .unwrap();
    assert_eq!((left, teams), (0, 0));
}
