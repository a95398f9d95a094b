//! The typed client against the message bus, inbox and shared memory endpoints.

use huddle_sdk::wire::{BatchMessage, PostMessage, Role};
use huddle_sdk::MessageQuery;
use huddle_tests::clients;
use huddle_tests::TestDaemon;
use serde_json::json;
use std::time::Duration;

fn post(to: &str, kind: &str, summary: &str) -> PostMessage {
    PostMessage {
        to: to.into(),
        kind: kind.into(),
        summary: summary.into(),
        data: json!({}),
    }
}

#[tokio::test]
async fn messages_are_posted_once_per_key_listed_and_filtered() {
    let d = TestDaemon::start().await;
    let coord = clients::team(&d, "qa").await;
    let tester = clients::agent(&d, "qa", "tester-1", Role::Tester).await;

    let first = coord
        .post_message(&post("*", "impl_progress", "starting"))
        .await
        .expect("post");
    assert_eq!((first.seq, first.from.as_str()), (1, "coordinator"));
    let keyed = tester
        .post_message_with_key(&post("coordinator", "test_result", "3/3"), "run-1")
        .await
        .unwrap();
    assert!(!keyed.replayed);
    let replay = tester
        .post_message_with_key(&post("coordinator", "test_result", "3/3"), "run-1")
        .await
        .unwrap();
    assert!(replay.replayed, "same key answers the stored message");
    assert_eq!(replay.message, keyed.message);
    let plain = tester
        .post_message(&PostMessage {
            data: json!({"passRate": 100}),
            ..post("coordinator", "test_result", "again")
        })
        .await
        .unwrap();
    assert_eq!(plain.seq, 3, "the replay stored nothing");

    let bad_type = coord
        .post_message(&post("*", "Bad Type", "x"))
        .await
        .unwrap_err();
    assert_eq!(bad_type.status(), Some(400));
    let observer = clients::agent(&d, "qa", "watcher", Role::Observer).await;
    let read_only = observer
        .post_message(&post("*", "note", "hi"))
        .await
        .unwrap_err();
    assert_eq!(
        (read_only.status(), read_only.code()),
        (Some(403), Some("forbidden"))
    );

    let all = coord.list_messages(&MessageQuery::default()).await.unwrap();
    assert_eq!(
        all.messages.iter().map(|m| m.seq).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    let from_tester = coord
        .list_messages(&MessageQuery {
            from: Some("tester-1".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(from_tester.messages.len(), 2);
    let results = coord
        .list_messages(&MessageQuery {
            kind: Some("impl_progress".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(results.messages[0].summary, "starting");
    let to_coord = coord
        .list_messages(&MessageQuery {
            to: Some("coordinator".into()),
            after: Some(2),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        to_coord.messages.iter().map(|m| m.seq).collect::<Vec<_>>(),
        [3]
    );
    let paged = coord
        .list_all_messages(&MessageQuery {
            limit: Some(1),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(paged.len(), 3, "list_all_messages follows next");
}

#[tokio::test]
async fn the_inbox_holds_messages_for_me_until_acknowledged_and_long_polls() {
    let d = TestDaemon::start().await;
    let coord = clients::team(&d, "qa").await;
    let tester = clients::agent(&d, "qa", "tester-1", Role::Tester).await;
    coord
        .post_message(&post("tester", "fix_required", "for the role"))
        .await
        .unwrap();
    coord
        .post_message(&post("executor", "note", "not for me"))
        .await
        .unwrap();
    coord
        .post_message(&post("tester-1", "note", "for me by name"))
        .await
        .unwrap();

    let inbox = tester.inbox(None, None).await.expect("inbox");
    let summaries: Vec<_> = inbox.messages.iter().map(|m| m.summary.as_str()).collect();
    assert_eq!(summaries, ["for the role", "for me by name"]);
    let cursor = tester.ack_inbox(inbox.messages[1].seq).await.expect("ack");
    assert_eq!(cursor.cursor, 3);
    assert!(tester.inbox(None, None).await.unwrap().messages.is_empty());

    let waiting = tokio::spawn({
        let tester = tester.clone();
        async move { tester.inbox(Some(Duration::from_secs(30)), Some(10)).await }
    });
    coord
        .post_message(&post("*", "note", "to everyone"))
        .await
        .unwrap();
    let woken = tokio::time::timeout(Duration::from_secs(25), waiting)
        .await
        .expect("woken")
        .unwrap()
        .unwrap();
    assert_eq!(woken.messages[0].summary, "to everyone");
    let bad_wait = tester
        .inbox(Some(Duration::from_secs(3600)), None)
        .await
        .unwrap_err();
    assert_eq!(bad_wait.status(), Some(400));
}

#[tokio::test]
async fn shared_memory_is_read_patched_replaced_and_versioned() {
    let d = TestDaemon::start().await;
    let coord = clients::team(&d, "qa").await;
    let start = coord.memory().await.expect("memory");

    let patched = coord
        .patch_memory(
            &json!({"test_strategy": {"test_framework": "pytest", "layers": ["unit"]}}),
            Some(start.version),
        )
        .await
        .expect("patch");
    assert_eq!(patched.version, start.version + 1);
    assert_eq!(
        coord
            .memory_at("/test_strategy/test_framework")
            .await
            .unwrap(),
        json!("pytest")
    );
    assert_eq!(
        coord.memory_at("test_strategy/layers/0").await.unwrap(),
        json!("unit")
    );
    assert_eq!(coord.memory_at("/").await.unwrap(), patched.doc);
    assert!(coord
        .memory_at("/nothing/here")
        .await
        .unwrap_err()
        .is_not_found());

    let stale = coord
        .patch_memory(&json!({"x": 1}), Some(start.version))
        .await
        .unwrap_err();
    assert!(stale.is_stale(), "{stale}");
    let merged = coord
        .patch_memory(&json!({"test_strategy": {"layers": null}, "x": 1}), None)
        .await
        .unwrap();
    assert_eq!(
        merged.doc,
        json!({"test_strategy": {"test_framework": "pytest"}, "x": 1})
    );
    let replaced = coord
        .replace_memory(&json!({"fresh": true}), Some(merged.version))
        .await
        .expect("replace");
    assert_eq!(
        (replaced.doc.clone(), replaced.version),
        (json!({"fresh": true}), merged.version + 1)
    );
    let stale_put = coord
        .replace_memory(&json!({}), Some(merged.version))
        .await
        .unwrap_err();
    assert_eq!(stale_put.code(), Some("stale_version"));

    let history = coord.memory_history(Some(10)).await.expect("history");
    let kinds: Vec<_> = history
        .changes
        .iter()
        .map(|c| (c.version, c.kind.as_str()))
        .collect();
    assert_eq!(kinds[0], (replaced.version, "replace"));
    assert_eq!(kinds.len(), 3);
    assert!(history.changes.iter().all(|c| c.agent == "coordinator"));
}

#[tokio::test]
async fn a_batch_is_posted_in_order_and_a_retried_batch_is_stored_once() {
    let d = TestDaemon::start().await;
    let coord = clients::team(&d, "qa").await;
    let tester = clients::agent(&d, "qa", "tester-1", Role::Tester).await;
    let item = |summary: &str, key: Option<&str>| BatchMessage {
        to: "coordinator".into(),
        kind: "test_result".into(),
        summary: summary.into(),
        data: json!({"test": summary}),
        idempotency_key: key.map(str::to_string),
    };
    let batch = [
        item("one", Some("k-1")),
        item("two", None),
        item("three", None),
    ];
    let posted = tester.post_messages(&batch).await.expect("batch");
    let seqs: Vec<_> = posted.messages.iter().map(|m| m.seq).collect();
    assert_eq!(seqs, [1, 2, 3]);
    assert!(posted.replayed.is_empty());
    assert_eq!(posted.messages[2].data, json!({"test": "three"}));
    // The keyed item is answered from the store; the unkeyed ones got fresh keys.
    let again = tester.post_messages(&batch).await.expect("again");
    assert_eq!(again.replayed, [0]);
    assert_eq!(again.messages[0], posted.messages[0]);
    assert_eq!((again.messages[1].seq, again.messages[2].seq), (4, 5));
    let bad = [
        item("fine", None),
        BatchMessage {
            to: "nobody".into(),
            ..item("lost", None)
        },
    ];
    let err = tester.post_messages(&bad).await.unwrap_err();
    assert!(err.to_string().contains("messages[1]"), "{err}");
    let listed = coord.list_messages(&MessageQuery::default()).await.unwrap();
    assert_eq!(listed.messages.len(), 5, "the refused batch stored nothing");
}
