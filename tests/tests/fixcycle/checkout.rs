//! One verdict per checkout: two testers on one project directory never judge it at the same
//! time. The second waits for the first (and says so on the bus), then judges the tree the
//! first one's fix left behind. And testers on different checkouts, each claiming for its
//! project, never take each other's tasks.

use huddle_sdk::roles::{checkout_project, TesterRole};
use huddle_sdk::wire::{Role, TaskStatus};
use huddle_sdk::{Client, Worker};
use huddle_tests::llm::projects::{pytest_project, SHOUT_BUG, SHOUT_OK, STRINGS_PY};
use huddle_tests::llm::stub::{fix, Scripted};
use huddle_tests::llm::team::{settings, team, Team};
use huddle_tests::llm::LlmStub;
use huddle_tests::{eventually, ADMIN};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_tester_on_the_same_checkout_waits_for_the_first() {
    let project = pytest_project(true, false);
    let gate = Arc::new(tokio::sync::Notify::new());
    let held = Scripted::Gate(
        gate.clone(),
        Box::new(fix(&[("pkg/strings.py", SHOUT_BUG, SHOUT_OK)])),
    );
    let stub = LlmStub::start("sk-stub", vec![held]).await;
    let t = team().await;
    t.task("TEST-001", json!({})).await;
    t.task("TEST-002", json!({})).await;
    t.start_tester(settings(&project.root, Some(&stub)));
    t.start_tester(settings(&project.root, Some(&stub)));

    // One tester is inside its cycle (its model call is held); the other waits for the lock.
    eventually(120, "a tester waits for the checkout", || async {
        t.messages("impl_progress")
            .await
            .iter()
            .any(|m| m.data["phase"] == "waitingForCheckout")
    })
    .await;
    eventually(120, "the first tester asks the model", || async {
        stub.requests().len() == 1
    })
    .await;
    gate.notify_one();

    let (a, b) = (t.closed("TEST-001").await, t.closed("TEST-002").await);
    for task in [&a, &b] {
        assert_eq!(
            task.status,
            TaskStatus::Completed,
            "{:?}",
            task.failure_reason
        );
    }
    assert_eq!(project.read("pkg/strings.py"), STRINGS_PY);
    assert_eq!(stub.requests().len(), 1, "the second judged the fixed tree");
    let waiting = t
        .messages("impl_progress")
        .await
        .into_iter()
        .find(|m| m.data["phase"] == "waitingForCheckout")
        .unwrap();
    let holder = waiting.data["holder"].as_str().unwrap();
    assert!(holder.starts_with("TEST-00"), "{holder}");
    assert_ne!(Some(&waiting.data["taskId"]), Some(&json!(&holder[..8])));
}

/// A tester worker for `project` as agent `name`, claiming only `project_name`'s tasks.
fn start_project_tester(t: &Team, token: &str, root: &std::path::Path, project_name: String) {
    let client = t.tester.with_token(token);
    let w = Worker::new(client, TesterRole::new(settings(root, None)))
        .role(Role::Tester)
        .project(project_name)
        .wait(Duration::from_millis(500));
    tokio::spawn(w.run_until(t.stop_token()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn testers_on_two_projects_each_take_only_their_projects_task() {
    let (calc, shop) = (pytest_project(false, false), pytest_project(false, false));
    // shop has one test more, so a verdict's counts tell which checkout it ran on.
    shop.write(
        "tests/test_extra.py",
        "def test_extra():\n    assert True\n",
    );
    let t = team().await;
    let admin = Client::new(&t.daemon.url, ADMIN).unwrap().with_team("qa");
    let shop_token = admin
        .create_agent("shop-tester", Role::Tester)
        .await
        .unwrap()
        .token;
    // The shop tester names its checkout as the SDK derives it (its directory, no git remote).
    let shop_name = checkout_project(&shop.root).await;
    assert!(!shop_name.is_empty());
    // Oldest first: a calc tester that ignored projects would take TEST-001 first.
    t.task("TEST-001", json!({"project": shop_name})).await;
    t.task("TEST-002", json!({"project": "calc"})).await;

    start_project_tester(&t, &t.tester_token, &calc.root, "calc".into());
    let done = t.closed("TEST-002").await;
    assert_eq!(
        done.status,
        TaskStatus::Completed,
        "{:?}",
        done.failure_reason
    );
    assert_eq!(done.claimed_by.as_deref(), Some("tester"));
    assert_eq!(done.result.unwrap()["evidence"]["counts"]["total"], 7);
    let waiting = t.coord.get_task("TEST-001").await.unwrap();
    assert_eq!(
        waiting.status,
        TaskStatus::Pending,
        "the calc tester took shop's task"
    );
    assert_eq!(waiting.attempts, 0);

    start_project_tester(&t, &shop_token, &shop.root, shop_name.clone());
    let done = t.closed("TEST-001").await;
    assert_eq!(
        done.status,
        TaskStatus::Completed,
        "{:?}",
        done.failure_reason
    );
    assert_eq!(done.claimed_by.as_deref(), Some("shop-tester"));
    let evidence = &done.result.unwrap()["evidence"];
    assert_eq!(evidence["counts"]["total"], 8, "{evidence}");
    assert_eq!(evidence["project"], json!(shop_name));
}
