//! OpenTelemetry traces from a real `huddled` and a real `huddle worker` process, both
//! exporting over OTLP/HTTP to a receiver that decodes with the protocol's own definitions: a
//! task attempt is one trace — the daemon's create, claim and completion, the worker's test
//! runs, model call, fix and verdict, and the daemon's request spans for the worker's calls —
//! under one root span.

use huddle_sdk::wire::{NewTask, Role, TaskStatus};
use huddle_sdk::Client;
use huddle_tests::cli::Huddle;
use huddle_tests::llm::projects::{pytest_project, SHOUT_BUG, SHOUT_OK};
use huddle_tests::llm::stub::fix;
use huddle_tests::llm::LlmStub;
use huddle_tests::otlp_receiver::{Receiver, Span};
use huddle_tests::process::HuddledProcess;
use huddle_tests::{eventually, ADMIN};
use std::collections::BTreeSet;

fn names(spans: &[&Span]) -> BTreeSet<String> {
    spans.iter().map(|s| s.name.clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_attempt_is_one_trace_across_the_daemon_and_the_worker() {
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    // Batches leave every 100 ms (the SDK's standard setting), so the test waits little.
    let daemon = HuddledProcess::start(
        dir.path(),
        &[
            ("HUDDLE_ADMIN_TOKEN", ADMIN),
            ("HUDDLE_TELEMETRY_OTLP_ENDPOINT", &receiver.base_url),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ],
    )
    .expect("huddled starts");
    let admin = Client::new(&daemon.url, ADMIN).unwrap().with_team("qa");
    admin.create_team("qa").await.unwrap();
    let coord = admin.with_token(
        &admin
            .create_agent("coordinator", Role::Coordinator)
            .await
            .unwrap()
            .token,
    );
    let tester_token = admin
        .create_agent("tester", Role::Tester)
        .await
        .unwrap()
        .token;
    coord
        .create_task(&NewTask {
            id: Some("TEST-001".into()),
            subject: "strings".into(),
            ..NewTask::default()
        })
        .await
        .unwrap();

    let project = pytest_project(true, false);
    let stub = LlmStub::start(
        super::cli::KEY,
        vec![fix(&[("pkg/strings.py", SHOUT_BUG, SHOUT_OK)])],
    )
    .await;
    let h = Huddle::new(&daemon.url, &tester_token, "qa");
    let mut cmd = super::cli::worker_command(&h, &project.root, Some(&stub));
    cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.base_url)
        .env("OTEL_BSP_SCHEDULE_DELAY", "100");
    let child = cmd.spawn().expect("huddle worker starts");

    eventually(420, "TEST-001 completed", || async {
        coord.get_task("TEST-001").await.unwrap().status == TaskStatus::Completed
    })
    .await;
    // SIGTERM: the worker stops, sending what it still holds.
    let log = super::cli::stop(child).await;
    assert!(log.contains("exporting traces to"), "{log}");

    let wanted = [
        "task.attempt",
        "task.create",
        "task.claim",
        "test_run",
        "model_call",
        "fix_applied",
        "verdict",
        "worker.attempt",
        "task.complete",
    ];
    eventually(60, "every span of the attempt at the receiver", || async {
        let spans = receiver.spans();
        wanted.iter().all(|w| spans.iter().any(|s| s.name == *w))
            && spans.iter().any(|s| s.name.ends_with("/complete"))
    })
    .await;

    let spans = receiver.spans();
    let of_task: Vec<&Span> = spans
        .iter()
        .filter(|s| s.attributes.get("huddle.task.id").map(String::as_str) == Some("TEST-001"))
        .collect();
    let traces: BTreeSet<&str> = of_task.iter().map(|s| s.trace_id.as_str()).collect();
    assert_eq!(traces.len(), 1, "one attempt, one trace: {of_task:#?}");
    let trace = *traces.iter().next().unwrap();
    let in_trace: Vec<&Span> = spans.iter().filter(|s| s.trace_id == trace).collect();
    let roots: Vec<&&Span> = in_trace
        .iter()
        .filter(|s| s.parent_span_id.is_empty())
        .collect();
    assert_eq!(roots.len(), 1, "one root: {in_trace:#?}");
    assert_eq!(roots[0].name, "task.attempt");
    assert_eq!(roots[0].service, "huddled");
    let root_id = &roots[0].span_id;
    for s in &in_trace {
        assert!(
            s.span_id == *root_id || s.parent_span_id == *root_id,
            "every span of the attempt hangs off its root: {s:#?}"
        );
    }
    let got = names(&in_trace);
    for w in wanted {
        assert!(got.contains(w), "{w} missing from the trace: {got:?}");
    }
    let service_of = |name: &str| {
        in_trace
            .iter()
            .filter(|s| s.name == name)
            .map(|s| s.service.as_str())
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(service_of("test_run"), BTreeSet::from(["huddle-worker"]));
    assert_eq!(service_of("task.claim"), BTreeSet::from(["huddled"]));
    // The worker's own requests, as the daemon saw them, are in the attempt's trace.
    let complete_request = in_trace
        .iter()
        .find(|s| s.name == "POST /v1/teams/{team}/tasks/{id}/complete")
        .unwrap_or_else(|| panic!("the completion request's span: {got:?}"));
    assert_eq!(complete_request.service, "huddled");
    assert_eq!(
        complete_request.attributes["http.response.status_code"],
        "200"
    );
    let model = in_trace.iter().find(|s| s.name == "model_call").unwrap();
    assert_eq!(model.attributes["gen_ai.request.model"], "stub-model");
    let runs = in_trace.iter().filter(|s| s.name == "test_run").count();
    assert!(
        runs >= 2,
        "the failing run and the run after the fix: {runs}"
    );
    let verdict = in_trace.iter().find(|s| s.name == "verdict").unwrap();
    assert_eq!(verdict.attributes["huddle.quality_gate_passed"], "true");
    drop(daemon);
}
