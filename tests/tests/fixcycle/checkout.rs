//! One verdict per checkout: two testers on one project directory never judge it at the same
//! time. The second waits for the first (and says so on the bus), then judges the tree the
//! first one's fix left behind.

use huddle_sdk::wire::TaskStatus;
use huddle_tests::eventually;
use huddle_tests::llm::projects::{pytest_project, SHOUT_BUG, SHOUT_OK, STRINGS_PY};
use huddle_tests::llm::stub::{fix, Scripted};
use huddle_tests::llm::team::{settings, team};
use huddle_tests::llm::LlmStub;
use serde_json::json;
use std::sync::Arc;

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
