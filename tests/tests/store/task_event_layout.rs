//! SQLite keeps a task event's data without its field names (`store::rules::task_event`) and
//! reads it back as the task everywhere it leaves the store: the published stream item, the
//! team's events, one task's events and an export. A row stored as an object, as earlier
//! versions did, reads the same.

use huddle_daemon::hub::Hub;
use huddle_daemon::store::transfer::Record;
use huddle_daemon::store::Store;
use huddle_sdk::wire::NewTask;
use huddle_tests::store::{prefixes, sqlite_with, task, team};
use rusqlite::Connection;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The team's `task.*` events as `list_events` reads them: `(seq, type, data)`.
async fn listed(store: &dyn Store, team_id: i64) -> Vec<(i64, String, Value)> {
    let events = store.list_events(team_id, 0, 1000).await.unwrap();
    events
        .into_iter()
        .filter(|e| e.kind.starts_with("task."))
        .map(|e| (e.seq, e.kind, e.data))
        .collect()
}

/// The export's `task.*` event records: `(seq, type, data)`.
async fn exported(store: &dyn Store, team_id: i64) -> Vec<(i64, String, Value)> {
    let mut records = store.export_team(team_id).await.unwrap();
    let mut events = Vec::new();
    while let Some(record) = records.recv().await {
        if let Record::Event(e) = record.unwrap() {
            if e.kind.starts_with("task.") {
                let data = serde_json::from_str(e.data.get()).unwrap();
                events.push((e.seq, e.kind, data));
            }
        }
    }
    events
}

fn stored_rows(db: &PathBuf) -> Vec<(i64, String)> {
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("select seq, data from events where type like 'task.%' order by seq")
        .unwrap();
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_events_are_stored_packed_and_read_as_the_task() {
    let hub = Arc::new(Hub::new(4096));
    let (store, keep) = sqlite_with(hub.clone()).await;
    let db = keep
        .as_ref()
        .and_then(|k| k.downcast_ref::<tempfile::TempDir>())
        .expect("a SQLite store keeps its directory")
        .path()
        .join("huddle.db");
    let (coord, tester, _) = team(&*store, "qa").await;
    let mut published = hub.subscribe_events(coord.team_id);

    let detailed = NewTask {
        description: Some("Run \"pytest -q\"\nthen report ✓".into()),
        metadata: Some(json!({"project": "api", "ratio": 0.25, "tags": ["a", null, true]})),
        ..task("TEST-001", &[])
    };
    let created = store
        .create_tasks(&coord, vec![detailed, task("TEST-002", &["TEST-001"])])
        .await
        .unwrap();
    let claimed = store
        .claim_task(&tester, prefixes("TEST"), 60_000)
        .await
        .unwrap()
        .expect("TEST-001 is ready");
    let done = store
        .complete_task(&tester, "TEST-001", Some(json!({"passed": 12})))
        .await
        .unwrap();

    // What each write answered is what its event reads as, field for field.
    let events = listed(&*store, coord.team_id).await;
    let kinds: Vec<&str> = events.iter().map(|(_, k, _)| k.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "task.created",
            "task.created",
            "task.claimed",
            "task.completed"
        ]
    );
    let mut answers = vec![created[0].clone(), created[1].clone(), claimed, done];
    for answer in &mut answers {
        // Only a claim's answer carries the attempt's trace context and gates.
        answer.traceparent = None;
        answer.gates.clear();
    }
    for ((_, kind, data), answer) in events.iter().zip(&answers) {
        assert_eq!(data, &serde_json::to_value(answer).unwrap(), "{kind}");
    }
    assert_eq!(events[3].2["result"], json!({"passed": 12}));
    assert_eq!(events[0].2["blocks"], json!(["TEST-002"]));

    // Stored without field names, and smaller than the object it reads as.
    let rows = stored_rows(&db);
    assert_eq!(rows.len(), 4);
    for ((seq, data), (listed_seq, _, value)) in rows.iter().zip(&events) {
        assert_eq!(seq, listed_seq);
        assert!(data.starts_with("[1,\""), "{data}");
        assert!(data.len() < value.to_string().len(), "{data}");
    }

    // The streamed items are the same events.
    for (seq, kind, data) in &events {
        let item = tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                let item = published.recv().await.unwrap();
                if item.seq == *seq {
                    return item;
                }
            }
        })
        .await
        .expect("every event is published");
        let sent: Value = serde_json::from_str(item.json()).unwrap();
        assert_eq!((&sent["type"], &sent["data"]), (&json!(kind), data));
    }

    // One task's events, and the export, read the same.
    let one = store
        .task_events(coord.team_id, "TEST-001", 10)
        .await
        .unwrap();
    let one: Vec<(i64, Value)> = one.into_iter().map(|e| (e.seq, e.data)).collect();
    let expected: Vec<(i64, Value)> = events
        .iter()
        .filter(|(_, _, d)| d["id"] == "TEST-001")
        .rev()
        .map(|(s, _, d)| (*s, d.clone()))
        .collect();
    assert_eq!(one, expected);
    assert_eq!(exported(&*store, coord.team_id).await, events);

    // Rows stored as objects (as before) read the same on every path.
    let conn = Connection::open(&db).unwrap();
    for (seq, _, data) in &events {
        conn.execute(
            "update events set data = ?2 where team_id = ?3 and seq = ?1",
            rusqlite::params![seq, data.to_string(), coord.team_id],
        )
        .unwrap();
    }
    assert!(stored_rows(&db).iter().all(|(_, d)| d.starts_with('{')));
    assert_eq!(listed(&*store, coord.team_id).await, events);
    let again = store
        .task_events(coord.team_id, "TEST-001", 10)
        .await
        .unwrap();
    let again: Vec<(i64, Value)> = again.into_iter().map(|e| (e.seq, e.data)).collect();
    assert_eq!(again, expected);
    assert_eq!(exported(&*store, coord.team_id).await, events);
}
