//! Many writes of one team at once: PostgreSQL runs them in shared transactions (group commit)
//! and SQLite's writer in shared batches. Whatever the grouping, refused writes fail alone, the
//! others all land once, and the event log stays gapless.

use futures::future::join_all;
use huddle_daemon::store::{Posted, Store, StoreError, StoreResult};
use huddle_sdk::wire::{Memory, PostMessage, Task};
use huddle_tests::store::{backends, prefixes, task, team};
use serde_json::json;
use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;

/// What one concurrent writer saw: two completions, or a post and a stale memory patch.
type Seen = (
    Option<StoreResult<Task>>,
    Option<StoreResult<Task>>,
    Option<StoreResult<Posted>>,
    Option<StoreResult<Memory>>,
);

#[tokio::test]
async fn concurrent_writes_with_refusals_among_them_each_get_their_own_answer() {
    for (store, _dir) in backends().await {
        let (coord, tester, executor) = team(&*store, "qa").await;
        let team_id = coord.team_id;
        let tasks = (1..=40)
            .map(|i| task(&format!("TEST-{i:03}"), &[]))
            .collect();
        store.create_tasks(&coord, tasks).await.unwrap();
        for _ in 0..40 {
            store
                .claim_task(&tester, prefixes("TEST"), 60_000)
                .await
                .unwrap()
                .unwrap();
        }
        let events_before = store.list_events(team_id, 0, 10_000).await.unwrap().len();
        let post = |n: usize| PostMessage {
            to: "*".into(),
            kind: "impl_progress".into(),
            summary: format!("step {n}"),
            data: json!({}),
        };
        let store_ref: &dyn Store = &*store;
        // Interleaved: the holder's completions, another agent's refused ones, posts (two with
        // the same idempotency key) and stale memory patches.
        let mut writes: Vec<Pin<Box<dyn Future<Output = Seen> + Send>>> = Vec::new();
        for i in 1..=40 {
            let id = format!("TEST-{i:03}");
            let (tester, executor) = (tester.clone(), executor.clone());
            writes.push(Box::pin(async move {
                let wrong = store_ref.complete_task(&executor, &id, None).await;
                let right = store_ref.complete_task(&tester, &id, None).await;
                (Some(wrong), Some(right), None, None)
            }));
        }
        for n in 0..10 {
            let tester = tester.clone();
            let key = if n < 2 {
                Some("same-key".to_string())
            } else {
                None
            };
            writes.push(Box::pin(async move {
                let posted = store_ref.post_message(&tester, post(n), key).await;
                let stale = store_ref
                    .patch_memory(&tester, json!({"n": n}), Some(999))
                    .await;
                (None, None, Some(posted), Some(stale))
            }));
        }
        let results = join_all(writes).await;
        let mut completed = HashSet::new();
        let mut seqs = Vec::new();
        let mut replayed = 0;
        for (wrong, right, posted, stale) in results {
            if let Some(wrong) = wrong {
                assert!(
                    matches!(wrong, Err(StoreError::Conflict { .. })),
                    "another agent's completion is refused: {wrong:?}"
                );
            }
            if let Some(right) = right {
                completed.insert(right.expect("the holder's completion lands").id);
            }
            if let Some(posted) = posted {
                let posted = posted.expect("a post lands");
                replayed += usize::from(posted.replayed);
                seqs.push(posted.message.seq);
            }
            if let Some(stale) = stale {
                assert!(
                    matches!(stale, Err(StoreError::StaleVersion { .. })),
                    "a stale patch is refused: {stale:?}"
                );
            }
        }
        assert_eq!(completed.len(), 40);
        // The two posts with one key are one message.
        assert_eq!(replayed, 1);
        seqs.sort();
        seqs.dedup();
        assert_eq!(seqs, (1..=9).collect::<Vec<i64>>());
        // Every landed write logged once, numbered without a gap: 40 completions, 9 posts.
        let events = store.list_events(team_id, 0, 10_000).await.unwrap();
        assert_eq!(events.len(), events_before + 49);
        for (i, e) in events.iter().enumerate() {
            assert_eq!(e.seq, i as i64 + 1, "event sequence has no gap");
        }
        let memory = store.get_memory(team_id).await.unwrap();
        assert_eq!(memory.doc, json!({}), "no refused patch left a trace");
    }
}
