//! Message search, the same on every backend: words match as prefixes in the summary and
//! `data`, in any order and case; filters by sender, recipient, type, task, time and `seq`
//! combine; `total` counts every match; teams never see each other's messages; text that looks
//! like query syntax is only words.

use huddle_daemon::store::rules::search_words;
use huddle_daemon::store::{MessageSearch, Store};
use huddle_sdk::wire::PostMessage;
use huddle_tests::store::{backends, team};
use serde_json::{json, Value};

fn post(to: &str, kind: &str, summary: &str, data: Value) -> PostMessage {
    PostMessage {
        to: to.into(),
        kind: kind.into(),
        summary: summary.into(),
        data,
    }
}

async fn seqs(store: &dyn Store, team_id: i64, search: MessageSearch) -> (Vec<i64>, i64) {
    let (messages, total) = store
        .search_messages(
            team_id,
            MessageSearch {
                limit: 100,
                ..search
            },
        )
        .await
        .unwrap();
    (messages.items.iter().map(|m| m.seq).collect(), total)
}

fn words(text: &str) -> Vec<String> {
    search_words(text).unwrap()
}

#[tokio::test]
async fn search_finds_by_words_and_filters_newest_first_on_every_backend() {
    for (store, _keep) in backends().await {
        let (coord, tester, executor) = team(&*store, "qa").await;
        let (other, other_tester, _) = team(&*store, "other").await;
        let t = coord.team_id;
        let posts = [
            (
                &tester,
                post(
                    "coordinator",
                    "test_result",
                    "TEST-001: 2 of 3 passed",
                    json!({"taskId": "TEST-001", "failed": ["test_average_single"]}),
                ),
            ),
            (
                &executor,
                post(
                    "*",
                    "impl_progress",
                    "fix applied to stats.py",
                    json!({"taskId": "TEST-001", "changedFiles": ["src/stats.py"]}),
                ),
            ),
            (
                &tester,
                post(
                    "coordinator",
                    "fix_required",
                    "average([5]) returned 2.5",
                    json!({"taskId": "TEST-002"}),
                ),
            ),
            (
                &coord,
                post(
                    "tester",
                    "error",
                    "Écart de caractères: naïve OR 1=1 \"quoted\" NEAR(x)",
                    json!({"task": "TEST-002"}),
                ),
            ),
        ];
        for (who, p) in posts {
            store.post_message(who, p, None).await.unwrap();
        }
        store
            .post_message(
                &other_tester,
                post(
                    "*",
                    "test_result",
                    "TEST-001 average in another team",
                    json!({"taskId": "TEST-001"}),
                ),
                None,
            )
            .await
            .unwrap();

        // Words as prefixes, any order and case, across summary and data.
        assert_eq!(
            seqs(
                &*store,
                t,
                MessageSearch {
                    words: words("test-00"),
                    ..Default::default()
                }
            )
            .await,
            (vec![4, 3, 2, 1], 4)
        );
        assert_eq!(
            seqs(
                &*store,
                t,
                MessageSearch {
                    words: words("STATS fix"),
                    ..Default::default()
                }
            )
            .await,
            (vec![2], 1)
        );
        assert_eq!(
            seqs(
                &*store,
                t,
                MessageSearch {
                    words: words("test_average_single"),
                    ..Default::default()
                }
            )
            .await,
            (vec![1], 1)
        );
        assert_eq!(
            seqs(
                &*store,
                t,
                MessageSearch {
                    words: words("average 2.5"),
                    ..Default::default()
                }
            )
            .await,
            (vec![3], 1)
        );
        assert_eq!(
            seqs(
                &*store,
                t,
                MessageSearch {
                    words: words("nowhere"),
                    ..Default::default()
                }
            )
            .await,
            (vec![], 0)
        );
        // Accents are kept; query syntax is only words.
        assert_eq!(
            seqs(
                &*store,
                t,
                MessageSearch {
                    words: words("écart naïve"),
                    ..Default::default()
                }
            )
            .await,
            (vec![4], 1)
        );
        assert_eq!(
            seqs(
                &*store,
                t,
                MessageSearch {
                    words: words("OR 1=1 \"quoted\" NEAR(x)"),
                    ..Default::default()
                }
            )
            .await,
            (vec![4], 1)
        );
        assert_eq!(
            seqs(
                &*store,
                t,
                MessageSearch {
                    words: words("* - ()"),
                    ..Default::default()
                }
            )
            .await,
            (vec![4, 3, 2, 1], 4),
            "no words: every message"
        );

        // Filters, alone and with words.
        assert_eq!(
            seqs(
                &*store,
                t,
                MessageSearch {
                    from: Some("tester".into()),
                    ..Default::default()
                }
            )
            .await,
            (vec![3, 1], 2)
        );
        assert_eq!(
            seqs(
                &*store,
                t,
                MessageSearch {
                    to: Some("*".into()),
                    ..Default::default()
                }
            )
            .await,
            (vec![2], 1)
        );
        assert_eq!(
            seqs(
                &*store,
                t,
                MessageSearch {
                    kind: Some("fix_required".into()),
                    ..Default::default()
                }
            )
            .await,
            (vec![3], 1)
        );
        assert_eq!(
            seqs(
                &*store,
                t,
                MessageSearch {
                    task: Some("TEST-002".into()),
                    ..Default::default()
                }
            )
            .await,
            (vec![4, 3], 2)
        );
        assert_eq!(
            seqs(
                &*store,
                t,
                MessageSearch {
                    task: Some("TEST-001".into()),
                    words: words("fix"),
                    ..Default::default()
                }
            )
            .await,
            (vec![2], 1)
        );
        assert_eq!(
            seqs(
                &*store,
                t,
                MessageSearch {
                    since_ms: Some(0),
                    until_ms: Some(i64::MAX),
                    from: Some("coordinator".into()),
                    ..Default::default()
                }
            )
            .await,
            (vec![4], 1)
        );
        assert_eq!(
            seqs(
                &*store,
                t,
                MessageSearch {
                    until_ms: Some(0),
                    ..Default::default()
                }
            )
            .await,
            (vec![], 0)
        );

        // Pages: newest first, `before` the last seq seen; the total stays the count of all.
        let (page, total) = store
            .search_messages(
                t,
                MessageSearch {
                    words: words("test"),
                    limit: 2,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(
            (page.items.iter().map(|m| m.seq).collect::<Vec<_>>(), total),
            (vec![4, 3], 4)
        );
        let (page, total) = store
            .search_messages(
                t,
                MessageSearch {
                    words: words("test"),
                    limit: 2,
                    before: Some(3),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(
            (page.items.iter().map(|m| m.seq).collect::<Vec<_>>(), total),
            (vec![2, 1], 4)
        );

        // The other team's message is its own.
        assert_eq!(
            seqs(
                &*store,
                other.team_id,
                MessageSearch {
                    words: words("average"),
                    ..Default::default()
                }
            )
            .await,
            (vec![1], 1)
        );
    }
}

/// SQLite indexes messages when a search with words needs them, a chunk of 2,000 per writer
/// job: a backlog of several chunks is all searchable, old and new, with an exact total; and
/// messages posted after that search are found by the next one.
#[tokio::test]
async fn a_backlog_of_several_index_chunks_is_all_searchable() {
    for (store, _keep) in backends().await {
        let (coord, tester, _) = team(&*store, "qa").await;
        let t = coord.team_id;
        let batch = |from: usize| -> Vec<(PostMessage, Option<String>)> {
            (from..from + 500)
                .map(|n| {
                    (
                        post("*", "note", &format!("run {n}: stored"), json!({"n": n})),
                        None,
                    )
                })
                .collect()
        };
        for b in 0..9 {
            store.post_messages(&tester, batch(b * 500)).await.unwrap();
        }
        assert_eq!(
            seqs(
                &*store,
                t,
                MessageSearch {
                    words: words("stored"),
                    limit: 1,
                    ..Default::default()
                }
            )
            .await
            .1,
            4500
        );
        assert_eq!(
            seqs(
                &*store,
                t,
                MessageSearch {
                    words: words("run 0"),
                    ..Default::default()
                }
            )
            .await,
            (vec![1], 1)
        );
        assert_eq!(
            seqs(
                &*store,
                t,
                MessageSearch {
                    words: words("run 4499"),
                    ..Default::default()
                }
            )
            .await,
            (vec![4500], 1)
        );
        store.post_messages(&tester, batch(4500)).await.unwrap();
        assert_eq!(
            seqs(
                &*store,
                t,
                MessageSearch {
                    words: words("run 4999"),
                    ..Default::default()
                }
            )
            .await,
            (vec![5000], 1)
        );
        assert_eq!(
            seqs(
                &*store,
                t,
                MessageSearch {
                    words: words("stored"),
                    limit: 1,
                    ..Default::default()
                }
            )
            .await
            .1,
            5000
        );
    }
}
