//! The team's model budget through the built-in tester (issue 51): each model call is reserved
//! and settled with the daemon; a budget spent mid-task refuses the next call, and the tester
//! releases the task with the `budget_exceeded` reason (no attempt used, no verdict) and takes
//! no model-calling task until a coordinator raises the budget, after which it resumes.

use huddle_sdk::roles::TesterRole;
use huddle_sdk::wire::{BudgetSettings, Role, TaskStatus};
use huddle_sdk::Worker;
use huddle_tests::llm::projects::{pytest_project, SHOUT_BUG, SHOUT_OK, WHISPER_OK};
use huddle_tests::llm::stub::fix;
use huddle_tests::llm::team::{settings, team};
use huddle_tests::llm::LlmStub;
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_spent_mid_task_releases_it_and_a_raised_budget_resumes_it() {
    // Two bugs: two model calls, each 150 tokens (the stub's usage).
    let project = pytest_project(true, true);
    let stub = LlmStub::start(
        "sk",
        vec![
            fix(&[("pkg/strings.py", SHOUT_BUG, SHOUT_OK)]),
            fix(&[("pkg/strings.py", "    return text.upper()\n", WHISPER_OK)]),
        ],
    )
    .await;
    let t = team().await;
    let budget = BudgetSettings {
        max_tokens: Some(150),
        ..BudgetSettings::default()
    };
    let set = t.coord.set_budget(&budget, None).await.unwrap();
    t.task("TEST-001", json!({})).await;
    let worker = Worker::new(
        t.tester.clone(),
        TesterRole::new(settings(&project.root, Some(&stub))),
    )
    .role(Role::Tester)
    .model("stub-model")
    .wait(Duration::from_millis(500));
    tokio::spawn(worker.run_until(t.stop_token()));

    // The first call spends the budget; the second is refused and the task given back. A task
    // that closes instead, or is not released in time, fails here with the task, what the team
    // was told and how many model calls were made.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(420);
    loop {
        let released = t.messages("task_released").await.iter().any(|m| {
            m.data["task"] == "TEST-001"
                && m.data["note"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("budget_exceeded"))
        });
        if released {
            break;
        }
        let task = t.coord.get_task("TEST-001").await.unwrap();
        let closed = !matches!(task.status, TaskStatus::Pending | TaskStatus::InProgress);
        if closed || tokio::time::Instant::now() >= deadline {
            let bus = t
                .coord
                .list_all_messages(&Default::default())
                .await
                .unwrap();
            panic!(
                "TEST-001 was not released for the budget (closed: {closed}; model calls left: {}):\n{task:#?}\n{bus:#?}",
                stub.remaining()
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let waiting = t.coord.get_task("TEST-001").await.unwrap();
    assert_eq!(waiting.status, TaskStatus::Pending);
    assert_eq!(waiting.attempts, 0, "a release uses no attempt");
    assert_eq!(stub.remaining(), 1, "the refused call was not made");
    assert!(t.messages("test_result").await.is_empty(), "no verdict");
    let exceeded = t.one("budget_exceeded").await;
    assert_eq!(exceeded.to, "coordinator");
    let spent = t.coord.spend_report(Some("TEST-001")).await.unwrap();
    assert_eq!(
        (
            spent.total.calls,
            spent.total.prompt_tokens,
            spent.total.completion_tokens
        ),
        (1, 120, 30)
    );

    // Raised: the worker claims the task again and finishes the fix.
    let raised = BudgetSettings {
        max_tokens: Some(10_000),
        ..BudgetSettings::default()
    };
    t.coord
        .set_budget(&raised, Some(set.version))
        .await
        .unwrap();
    let done = t.closed("TEST-001").await;
    assert_eq!(
        done.status,
        TaskStatus::Completed,
        "{:?}",
        done.failure_reason
    );
    assert_eq!(stub.remaining(), 0);
    let spent = t.coord.spend_report(Some("TEST-001")).await.unwrap();
    assert_eq!((spent.total.calls, spent.total.tokens), (2, 300));
    assert_eq!(spent.by_agent[0].key, "tester");
    assert_eq!(spent.by_model[0].key, "stub-model");
}
