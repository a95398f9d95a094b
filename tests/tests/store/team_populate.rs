//! A team with a row in every table, for the whole-team tests (`team_admin.rs`): deleting
//! it, exporting it, importing it.

use huddle_daemon::store::rules::spend::Reserved;
use huddle_daemon::store::webhooks::{NewDelivery, Progress};
use huddle_daemon::store::{MessageSearch, Store};
use huddle_sdk::wire::{
    BudgetSettings, NewTestRun, PostMessage, ReserveSpend, SettleSpend, TestOutcome,
    TestResultRecord, WebhookTrigger,
};
use huddle_tests::store::{prefixes, task, team};
use serde_json::json;

fn post(summary: &str) -> PostMessage {
    PostMessage {
        to: "*".into(),
        kind: "impl_progress".into(),
        summary: summary.into(),
        data: json!({"taskId": "TEST-002", "z": 1, "a": [1, 2]}),
    }
}

/// A team with a row in every table: agents, counters, tasks with edges (one in progress),
/// messages with a key, events, memory with history, a test run, a webhook with a delivery,
/// and (SQLite) messages in the search index.
pub(crate) async fn populate(store: &dyn Store, name: &str) -> i64 {
    let (coord, tester, _) = team(store, name).await;
    store
        .create_tasks(
            &coord,
            vec![
                task("TEST-001", &[]),
                task("TEST-002", &["TEST-001"]),
                task("TEST-003", &[]),
            ],
        )
        .await
        .unwrap();
    let auto = huddle_sdk::wire::NewTask {
        prefix: Some("QARUN".into()),
        subject: "numbered".into(),
        metadata: Some(json!({"project": "calc", "b": 2, "a": 1})),
        ..Default::default()
    };
    store.create_tasks(&coord, vec![auto]).await.unwrap();
    store
        .complete_task(&coord, "TEST-003", Some(json!({"ok": true})))
        .await
        .unwrap();
    // One failed attempt, then held again: exported released, with its attempt.
    store
        .claim_task(&tester, prefixes("TEST"), 60_000)
        .await
        .unwrap()
        .expect("TEST-001 is ready");
    store
        .fail_task(&tester, "TEST-001", "flaky".into(), false, None)
        .await
        .unwrap();
    store
        .claim_task(&tester, prefixes("TEST"), 60_000)
        .await
        .unwrap()
        .expect("TEST-001 is ready again");
    store
        .post_message(&tester, post("hello world"), Some("k-1".into()))
        .await
        .unwrap();
    store
        .post_message(&coord, post("second"), None)
        .await
        .unwrap();
    let search = MessageSearch {
        words: vec!["hello".into()],
        limit: 10,
        ..Default::default()
    };
    let (found, _) = store.search_messages(coord.team_id, search).await.unwrap();
    assert_eq!(found.items.len(), 1);
    store
        .patch_memory(&coord, json!({"plan": {"step": 1}}), None)
        .await
        .unwrap();
    store
        .record_test_run(
            &tester,
            NewTestRun {
                project: "calc".into(),
                tree: "abc".into(),
                started_at: None,
                tier: Some("unit".into()),
                task: None,
                artifacts: None,
                outcomes: vec![
                    TestResultRecord {
                        nodeid: "b".into(),
                        outcome: TestOutcome::Failed,
                    },
                    TestResultRecord {
                        nodeid: "a".into(),
                        outcome: TestOutcome::Passed,
                    },
                ],
            },
        )
        .await
        .unwrap();
    let hook = store
        .create_webhook(
            &coord,
            "https://example.com/hook",
            &[WebhookTrigger::TaskFailed],
            "s3cret",
            10,
        )
        .await
        .unwrap();
    // The admin's per-team overrides (`team_settings`).
    let mut settings = huddle_sdk::wire::TeamSettings::default();
    settings.quotas.max_tasks = Some(10_000);
    store
        .set_team_settings(coord.team_id, settings)
        .await
        .unwrap();
    // The model budget and one settled call (`spend_budgets`, `spend_calls`, `spend_days`).
    let budget = BudgetSettings {
        max_tokens: Some(1_000),
        ..BudgetSettings::default()
    };
    store
        .set_budget(coord.team_id, "coordinator", None, budget)
        .await
        .unwrap();
    let call = ReserveSpend {
        model: "m".into(),
        task: Some("TEST-001".into()),
    };
    let Reserved::Granted(call) = store.reserve_spend(&coord, call).await.unwrap() else {
        panic!("a reservation under the budget is granted");
    };
    let tokens = SettleSpend {
        prompt_tokens: 10,
        completion_tokens: 5,
    };
    store.settle_spend(&coord, call.id, tokens).await.unwrap();
    let leased = store.lease_webhooks("replica-a", 60_000).await.unwrap();
    assert!(leased.iter().any(|j| j.id == hook.id));
    let progress = Progress {
        cursors: (1, 1),
        deliveries: vec![NewDelivery {
            trigger: WebhookTrigger::TaskFailed,
            seq: 1,
            task_id: Some("TEST-001".into()),
            delivered: true,
            attempts: 1,
            http_status: Some(200),
            error: None,
        }],
        keep: 10,
        lease_ms: 60_000,
    };
    assert!(store
        .advance_webhook(hook.id, "replica-a", progress)
        .await
        .unwrap());
    coord.team_id
}
