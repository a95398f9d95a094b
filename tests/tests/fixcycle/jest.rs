//! The tester on the jest fixture with two real bugs: two fixes through the (stubbed) model,
//! affected runs through jest's related-tests mode, the verdict from a full run.

use huddle_sdk::wire::{NewTask, TaskStatus};
use huddle_tests::llm::projects::{
    jest_project, JS_SHOUT_BUG, JS_SHOUT_OK, JS_WHISPER_BUG, JS_WHISPER_OK,
};
use huddle_tests::llm::stub::fix;
use huddle_tests::llm::team::{settings, team};
use huddle_tests::llm::LlmStub;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_fixes_the_jest_project_in_two_iterations() {
    let project = jest_project();
    let stub = LlmStub::start(
        "sk-stub",
        vec![
            fix(&[("src/strings.js", JS_SHOUT_BUG, JS_SHOUT_OK)]),
            fix(&[("src/strings.js", JS_WHISPER_BUG, JS_WHISPER_OK)]),
        ],
    )
    .await;
    let t = team().await;
    t.coord
        .create_tasks(&[
            NewTask {
                id: Some("TEST-001".into()),
                subject: "strings".into(),
                ..NewTask::default()
            },
            NewTask {
                id: Some("QARUN-001".into()),
                subject: "qa".into(),
                blocked_by: vec!["TEST-001".into()],
                ..NewTask::default()
            },
        ])
        .await
        .unwrap();
    t.start_tester(settings(&project.root, Some(&stub)));
    t.start_executor(settings(&project.root, Some(&stub)));

    let test = t.closed("TEST-001").await;
    assert_eq!(
        test.status,
        TaskStatus::Completed,
        "{:?}",
        test.failure_reason
    );
    let js = project.read("src/strings.js");
    assert!(
        js.contains(JS_SHOUT_OK) && js.contains(JS_WHISPER_OK),
        "{js}"
    );
    let d = t.one("test_result").await.data;
    assert_eq!(
        (
            d["passRate"].as_f64(),
            d["total"].as_u64(),
            d["failed"].as_u64()
        ),
        (Some(100.0), Some(6), Some(0)),
        "{d:#}"
    );
    assert_eq!(d["framework"], "jest");
    assert_eq!(d["qualityGatePassed"], true);
    assert_eq!(stub.requests().len(), 2);
    assert_eq!(
        d["iterations"], 3,
        "two fixes, then the verdict: as before the verdict rules"
    );
    assert!(stub
        .user_message(0)
        .contains("src/strings.test.js::shout upper-cases and adds a bang"));

    let qarun = t.closed("QARUN-001").await;
    assert_eq!(
        qarun.status,
        TaskStatus::Completed,
        "{:?}",
        qarun.failure_reason
    );
    let l1 = t.coord.memory_at("/execution_results/L1").await.unwrap();
    assert_eq!(
        (
            l1["framework"].as_str(),
            l1["allPassed"].as_bool(),
            l1["testsPassed"].as_u64()
        ),
        (Some("jest"), Some(true), Some(6))
    );
}
