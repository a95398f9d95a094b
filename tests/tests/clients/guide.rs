//! `docs/coordinator-guide.md`: its coordinators (Python, and JavaScript run by plain `node`),
//! exactly as printed there, run against a real
//! daemon with a real tester and executor (`huddle worker --project` on a passing pytest
//! project), create the TEST→QARUN pair, and print the verdicts the guide shows.

use crate::support::{
    code_block, failing_project, install_client, passing_project, repo, run_ok, working_team,
};

fn guide() -> String {
    std::fs::read_to_string(repo().join("docs/coordinator-guide.md")).expect("the guide")
}

/// The output the guide says the coordinators print.
fn printed_in_guide(doc: &str) -> String {
    code_block(doc, "It prints, for a project whose suite passes:", "text")
}

/// Runs the guide's Python coordinator against workers on `project`; returns what it printed.
async fn python_coordinator(project: &std::path::Path) -> String {
    huddle_tests::python::require_modules(&["httpx", "httpx_sse"]);
    let program = code_block(&guide(), "<!-- coordinator.py", "python");
    assert!(
        program.lines().count() <= 30,
        "the guide promises at most 30 lines"
    );
    let team = working_team(project).await;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("coordinator.py");
    std::fs::write(&script, &program).unwrap();
    let mut cmd = tokio::process::Command::new("python3");
    cmd.arg(&script)
        .env("PYTHONPATH", repo().join("clients/python/src"))
        .env("HUDDLE_URL", &team.daemon.url)
        .env("HUDDLE_TOKEN", &team.coordinator_token)
        .env("HUDDLE_TEAM", "qa");
    let out = run_ok(cmd, "the guide's Python coordinator", 240).await;
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guides_python_coordinator_prints_both_verdicts() {
    let project = passing_project();
    assert_eq!(
        python_coordinator(project.path()).await,
        printed_in_guide(&guide()),
        "the coordinator prints what the guide shows"
    );
}

/// A TEST task that fails for good ends the program: the QA run it blocks never starts, and
/// the coordinator does not wait for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guides_python_coordinator_stops_when_the_test_task_fails() {
    let project = failing_project();
    let printed = python_coordinator(project.path()).await;
    let lines: Vec<&str> = printed.lines().collect();
    assert_eq!(lines.len(), 1, "one verdict, then it stops: {printed}");
    assert!(
        lines[0].starts_with("TEST-001: failed (quality gate not met: "),
        "{printed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guides_javascript_coordinator_prints_both_verdicts() {
    let doc = guide();
    let program = code_block(&doc, "<!-- coordinator.mjs", "js");
    assert!(
        program.lines().count() <= 30,
        "the guide promises at most 30 lines"
    );
    // The program's own project, with the client installed as the guide says, run with plain
    // `node` (no compiler, no loader).
    let dir = tempfile::tempdir().unwrap();
    let app = install_client(dir.path()).await;
    std::fs::write(app.join("coordinator.mjs"), &program).unwrap();

    let project = passing_project();
    let team = working_team(project.path()).await;
    let mut cmd = tokio::process::Command::new("node");
    cmd.arg("coordinator.mjs")
        .current_dir(&app)
        .env("HUDDLE_URL", &team.daemon.url)
        .env("HUDDLE_TOKEN", &team.coordinator_token)
        .env("HUDDLE_TEAM", "qa");
    let out = run_ok(cmd, "the guide's JavaScript coordinator", 240).await;
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        printed_in_guide(&doc),
        "the coordinator prints what the guide shows"
    );
}
