//! What a store publishes after it commits: every committed event and message reaches the hub
//! once, in sequence order with no gap, and refused writes publish nothing — on SQLite (the
//! writer publishes) and on PostgreSQL (the replica's listener reads NOTIFY announcements),
//! including between two replicas sharing one database.

use huddle_daemon::hub::{Hub, StreamItem};
use huddle_daemon::store::Store;
use huddle_sdk::wire::PostMessage;
use huddle_tests::store::{postgres_on, prefixes, sqlite_with, task, team, Keep};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;

fn post(to: &str, n: usize) -> PostMessage {
    PostMessage {
        to: to.into(),
        kind: "impl_progress".into(),
        summary: format!("step {n}"),
        data: json!({ "n": n }),
    }
}

/// Receives `count` items past `after`, failing after a generous deadline. (A replica's
/// listener may still be delivering changes committed before the subscription: streams skip
/// what their cursor has passed, and so does this.)
async fn take_after(
    rx: &mut broadcast::Receiver<Arc<StreamItem>>,
    after: i64,
    count: usize,
) -> Vec<Arc<StreamItem>> {
    let mut got = Vec::new();
    while got.len() < count {
        match tokio::time::timeout(Duration::from_secs(30), rx.recv()).await {
            Ok(Ok(item)) if item.seq <= after => {}
            Ok(Ok(item)) => got.push(item),
            Ok(Err(e)) => panic!("hub receiver: {e} after {} items", got.len()),
            Err(_) => panic!("only {} of {count} items published in 30 s", got.len()),
        }
    }
    got
}

fn assert_consecutive(items: &[Arc<StreamItem>], what: &str) {
    for w in items.windows(2) {
        assert_eq!(
            w[1].seq,
            w[0].seq + 1,
            "{what}: a gap or reorder at {}",
            w[0].seq
        );
    }
}

async fn stores() -> Vec<(Arc<dyn Store>, Arc<Hub>, Keep)> {
    let sqlite_hub = Arc::new(Hub::new(4096));
    let (sqlite, keep) = sqlite_with(sqlite_hub.clone()).await;
    let pg_hub = Arc::new(Hub::new(4096));
    let url = huddle_tests::pg::fresh_database().await;
    let (pg, pg_keep) = postgres_on(&url, pg_hub.clone()).await;
    vec![(sqlite, sqlite_hub, keep), (pg, pg_hub, pg_keep)]
}

#[tokio::test]
async fn concurrent_writes_are_published_once_in_sequence_order() {
    for (store, hub, _keep) in stores().await {
        let (coord, tester, executor) = team(&*store, "qa").await;
        let mut events = hub.subscribe_events(coord.team_id);
        let mut messages = hub.subscribe_messages(coord.team_id);
        let mut tasks_changed = hub.watch_tasks(coord.team_id);
        let before = store.list_events(coord.team_id, 0, 1000).await.unwrap();
        let mut writers = Vec::new();
        for (who, to) in [
            (tester.clone(), "coordinator"),
            (executor.clone(), "tester"),
        ] {
            let store = store.clone();
            writers.push(tokio::spawn(async move {
                for n in 0..20 {
                    store.post_message(&who, post(to, n), None).await.unwrap();
                }
            }));
        }
        store
            .create_tasks(
                &coord,
                vec![task("TEST-001", &[]), task("TEST-002", &["TEST-001"])],
            )
            .await
            .unwrap();
        // A refused write publishes nothing and leaves no gap.
        assert!(store
            .post_message(&tester, post("nobody", 0), None)
            .await
            .is_err());
        for w in writers {
            w.await.unwrap();
        }
        let got_messages = take_after(&mut messages, 0, 40).await;
        assert_consecutive(&got_messages, "messages");
        assert_eq!(got_messages[0].seq, 1);
        // 40 message.posted events and 2 task.created, after the agents' events.
        let last_before = before.last().unwrap().seq;
        let got_events = take_after(&mut events, last_before, 42).await;
        assert_consecutive(&got_events, "events");
        assert_eq!(got_events[0].seq, last_before + 1);
        let stored = store.list_events(coord.team_id, 0, 1000).await.unwrap();
        assert_eq!(stored.last().unwrap().seq, got_events.last().unwrap().seq);
        tokio::time::timeout(Duration::from_secs(30), tasks_changed.changed())
            .await
            .expect("claimers were woken")
            .unwrap();
        // Each published message is the stored one.
        let first: serde_json::Value = serde_json::from_str(got_messages[0].json()).unwrap();
        assert_eq!(first["seq"], 1);
        assert!(first["summary"].as_str().unwrap().starts_with("step "));
        let claimed = store
            .claim_task(&tester, prefixes("TEST"), 60_000)
            .await
            .unwrap();
        assert_eq!(claimed.unwrap().id, "TEST-001");
    }
}

#[tokio::test]
async fn postgres_replicas_see_each_others_writes_in_order() {
    let url = huddle_tests::pg::fresh_database().await;
    let (hub_a, hub_b) = (Arc::new(Hub::new(4096)), Arc::new(Hub::new(4096)));
    let (a, _ka) = postgres_on(&url, hub_a.clone()).await;
    let (b, _kb) = postgres_on(&url, hub_b.clone()).await;
    let (coord, tester, executor) = team(&*a, "qa").await;
    let mut on_b = hub_b.subscribe_messages(coord.team_id);
    let mut on_a = hub_a.subscribe_messages(coord.team_id);
    let mut b_tasks = hub_b.watch_tasks(coord.team_id);
    // Both replicas write to the same team at once.
    let mut writers = Vec::new();
    for (store, who) in [(a.clone(), tester.clone()), (b.clone(), executor.clone())] {
        writers.push(tokio::spawn(async move {
            for n in 0..25 {
                store
                    .post_message(&who, post("coordinator", n), None)
                    .await
                    .unwrap();
            }
        }));
    }
    for w in writers {
        w.await.unwrap();
    }
    let seen_b = take_after(&mut on_b, 0, 50).await;
    let seen_a = take_after(&mut on_a, 0, 50).await;
    assert_consecutive(&seen_b, "replica B");
    assert_consecutive(&seen_a, "replica A");
    assert_eq!(seen_b[0].seq, 1);
    let senders: std::collections::HashSet<_> = seen_b.iter().map(|m| m.from.clone()).collect();
    assert_eq!(senders.len(), 2, "B saw both replicas' posts");
    // A task created through A wakes claimers on B, and B can claim it.
    a.create_tasks(&coord, vec![task("TEST-001", &[])])
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(30), b_tasks.changed())
        .await
        .expect("B's claimers were woken by A's task")
        .unwrap();
    let claimed = b
        .claim_task(&tester, prefixes("TEST"), 60_000)
        .await
        .unwrap();
    assert_eq!(claimed.unwrap().id, "TEST-001");
    // Lease expiry on either replica: a short lease expires once, whichever sweeps.
    a.create_tasks(&coord, vec![task("TEST-002", &[])])
        .await
        .unwrap();
    let held = b
        .claim_task(&executor, prefixes("TEST"), 1)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(held.id, "TEST-002");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let mut moved = 0;
    while moved == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the lease never expired"
        );
        let (x, y) = tokio::join!(a.expire_leases(), b.expire_leases());
        moved = x.unwrap() + y.unwrap();
        tokio::task::yield_now().await;
    }
    assert_eq!(moved, 1, "one replica expired the lease, not both");
    let task = a.get_task(coord.team_id, "TEST-002").await.unwrap();
    assert_eq!(task.attempts, 1);
}

/// A replica reads the events another wrote only while someone there follows them (or for a
/// revocation): a follower that arrives later catches up from the database and then sees the
/// rest live, in order, and a revocation reaches a replica where nobody follows the events.
#[tokio::test]
async fn a_replica_delivers_events_to_whoever_follows_them_and_revocations_always() {
    let url = huddle_tests::pg::fresh_database().await;
    let (hub_a, hub_b) = (Arc::new(Hub::new(4096)), Arc::new(Hub::new(4096)));
    let (a, _ka) = postgres_on(&url, hub_a.clone()).await;
    let (b, _kb) = postgres_on(&url, hub_b.clone()).await;
    let (coord, tester, _executor) = team(&*a, "qa").await;
    let mut revocations = hub_b.subscribe_revocations();
    // Nobody follows the events on B while A writes.
    assert!(!hub_b.events_watched(coord.team_id));
    for n in 1..=5 {
        a.create_tasks(&coord, vec![task(&format!("TEST-{n:03}"), &[])])
            .await
            .unwrap();
    }
    // A revocation on A reaches B anyway.
    a.set_agent_token(coord.team_id, &tester.agent, None)
        .await
        .unwrap();
    let revoked = tokio::time::timeout(Duration::from_secs(30), revocations.recv())
        .await
        .expect("B heard of the revocation within 30 s")
        .unwrap();
    assert_eq!(revoked.agent, tester.agent);
    // A follower on B subscribes, then catches up from the database, as a stream does.
    let mut live = hub_b.subscribe_events(coord.team_id);
    assert!(hub_b.events_watched(coord.team_id));
    let stored = b.list_events(coord.team_id, 0, 1000).await.unwrap();
    let caught_up = stored.last().unwrap().seq;
    assert!(stored.iter().any(|e| e.kind == "agent.revoked"));
    // What A writes from now on reaches B's follower live, in order, after the catch-up.
    for n in 6..=10 {
        a.create_tasks(&coord, vec![task(&format!("TEST-{n:03}"), &[])])
            .await
            .unwrap();
    }
    let seen = take_after(&mut live, caught_up, 5).await;
    assert_consecutive(&seen, "replica B's events");
    assert_eq!(seen[0].seq, caught_up + 1);
    assert!(seen.iter().all(|e| e.kind == "task.created"));
    let stored = b.list_events(coord.team_id, 0, 1000).await.unwrap();
    assert_eq!(stored.last().unwrap().seq, seen.last().unwrap().seq);
}
