//! A model that does not help is stopped early instead of burning every iteration: two
//! unusable replies in a row end the cycle with `fix_required` naming them, a `cannot_fix`
//! given as a bare string is taken as the reason, and calls that keep ending in 5xx answers
//! count as `model_unreachable`.

use huddle_sdk::wire::TaskStatus;
use huddle_tests::llm::projects::{pytest_project, SHOUT_BUG};
use huddle_tests::llm::stub::{content, error, Scripted};
use huddle_tests::llm::team::{settings, team, Team};
use huddle_tests::llm::LlmStub;
use serde_json::json;

async fn failed_tester(script: Vec<Scripted>) -> (Team, LlmStub) {
    let project = pytest_project(true, false);
    let stub = LlmStub::start("sk-stub", script).await;
    let t = team().await;
    t.task("TEST-001", json!({})).await;
    t.start_tester(settings(&project.root, Some(&stub)));
    let task = t.closed("TEST-001").await;
    assert_eq!(task.status, TaskStatus::Failed);
    assert!(project.read("pkg/strings.py").contains(SHOUT_BUG));
    let d = t.one("test_result").await.data;
    assert_eq!(d["qualityGatePassed"], false);
    (t, stub)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_garbage_replies_end_the_cycle_with_fix_required() {
    let (t, stub) = failed_tester(vec![
        content("<html><body><h1>502 Bad Gateway</h1></body></html>"),
        content("Sure! I would change the shout function."),
    ])
    .await;
    assert_eq!(stub.requests().len(), 2, "not ten calls");
    let required = t.one("fix_required").await.data;
    assert_eq!(required["category"], "model");
    assert_eq!(
        required["tests"],
        json!(["tests/test_strings.py::test_shout"])
    );
    let reason = required["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(
            "the model gave 2 unusable replies in a row: refused: the reply contained neither"
        ),
        "{reason}"
    );
    let result = t.one("test_result").await.data;
    assert_eq!(result["stopReason"]["kind"], "unavailable");
    assert_eq!(result["modelCalls"], 2);
    assert!(t.messages("error").await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cannot_fix_given_as_a_string_is_taken_as_the_reason() {
    let reply = json!({"edits": [], "explanation": "", "cannot_fix": "the spec says shout ends with a question mark"});
    let (t, stub) = failed_tester(vec![content(&reply.to_string())]).await;
    assert_eq!(stub.requests().len(), 1);
    let required = t.one("fix_required").await.data;
    assert_eq!(
        (required["category"].as_str(), required["reason"].as_str()),
        (
            Some("other"),
            Some("the spec says shout ends with a question mark")
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_that_keep_ending_in_500_count_as_model_unreachable() {
    // The client tries each call four times; two calls in a row fail.
    let (t, stub) = failed_tester(vec![error(500, "stub overloaded"); 8]).await;
    assert_eq!(stub.requests().len(), 8);
    assert_eq!(stub.remaining(), 0);
    let e = t.one("error").await.data;
    assert_eq!(
        (e["code"].as_str(), e["tool"].as_str()),
        (Some("model_unreachable"), Some("llm"))
    );
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("answered 500 after 4 tries"),
        "{e:#}"
    );
    assert!(t.messages("fix_required").await.is_empty());
    assert_eq!(t.one("test_result").await.data["modelCalls"], 2);
}
