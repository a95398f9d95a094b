//! `post_message_changing_memory` (`team_msg`'s `state_update`): the message and the memory
//! change are one transaction on every backend — the change is computed from the document as
//! it is inside it, so concurrent posts never lose one another's change, and a change that
//! fails leaves no message behind.

use huddle_daemon::store::{MemoryOps, MessageFilter, Store};
use huddle_sdk::wire::PostMessage;
use huddle_tests::store::{backends, team};
use serde_json::json;
use std::sync::Arc;

fn post(summary: &str) -> PostMessage {
    PostMessage {
        to: "*".into(),
        kind: "state_update".into(),
        summary: summary.into(),
        data: json!({}),
    }
}

/// Adds one to `/count`, reading it from the document the store hands over.
fn increment() -> MemoryOps {
    Arc::new(|doc| {
        let n = doc["count"].as_i64().unwrap_or(0);
        json!([{"op": "add", "path": "/count", "value": n + 1}])
    })
}

async fn messages(store: &dyn Store, team_id: i64) -> usize {
    let filter = MessageFilter {
        limit: 1000,
        ..Default::default()
    };
    store
        .list_messages(team_id, filter)
        .await
        .unwrap()
        .items
        .len()
}

#[tokio::test]
async fn concurrent_posts_each_change_the_memory_they_read_and_a_failed_change_posts_nothing() {
    for (store, _dir) in backends().await {
        let (_, tester, executor) = team(&*store, "qa").await;
        let writes = (0..20).map(|i| {
            let (store, caller) = (store.clone(), if i % 2 == 0 { &tester } else { &executor });
            async move {
                store
                    .post_message_changing_memory(caller, post(&format!("n{i}")), increment())
                    .await
                    .unwrap()
            }
        });
        let done = futures::future::join_all(writes).await;
        let mut seqs: Vec<i64> = done.iter().map(|(p, _)| p.message.seq).collect();
        seqs.sort();
        assert_eq!(seqs, (1..=20).collect::<Vec<_>>());
        let memory = store.get_memory(tester.team_id).await.unwrap();
        assert_eq!(
            memory.doc["count"], 20,
            "every change saw the one before it"
        );

        let failing: MemoryOps =
            Arc::new(|_| json!([{"op": "test", "path": "/count", "value": -1}]));
        let refused = store
            .post_message_changing_memory(&tester, post("refused"), failing)
            .await;
        assert!(refused.is_err(), "{refused:?}");
        assert_eq!(
            messages(&*store, tester.team_id).await,
            20,
            "no message alone"
        );
        let after = store.get_memory(tester.team_id).await.unwrap();
        assert_eq!(after.version, memory.version);
    }
}
