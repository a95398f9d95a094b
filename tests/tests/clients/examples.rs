//! The examples a newcomer runs first, exactly as printed: the README's "your own project"
//! (a real `huddled`, `huddle` commands and workers on a passing pytest project), the curl
//! walkthrough in docs/api.md, and the first example and the gate example of each client's
//! README. Each must run to its end against a real daemon and do what its text says.

use crate::support::{code_block, install_client, passing_project, repo, run_ok};
use huddle_tests::cli::huddle_bin;
use huddle_tests::process::{huddled_binary, HuddledProcess};
use huddle_tests::{TestDaemon, ADMIN};
use serde_json::Value;

fn doc(path: &str) -> String {
    std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `bash -eu` running `script` in `dir` with `target/<profile>/` (huddled, huddle) on `PATH`.
fn bash(script: &str, dir: &std::path::Path) -> tokio::process::Command {
    let bins = [
        huddle_bin().parent().unwrap().to_path_buf(),
        huddled_binary()
            .expect("huddled is built")
            .parent()
            .unwrap()
            .to_path_buf(),
    ];
    let path = std::env::join_paths(bins.iter().cloned().chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let mut cmd = tokio::process::Command::new("bash");
    cmd.args(["-euc", script])
        .current_dir(dir)
        .env("PATH", path);
    for key in ["HUDDLE_URL", "HUDDLE_TOKEN", "HUDDLE_TEAM", "HUDDLE_CONFIG"] {
        cmd.env_remove(key);
    }
    cmd
}

/// The README's own project: the daemon in its own terminal (here a process in the same
/// directory), then the block as printed, on a passing project instead of `~/src/myapp`. Both
/// tasks end completed, and the workers stop with `kill %1 %2` as the README says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readmes_own_project_runs_to_two_completed_tasks() {
    huddle_tests::python::require_modules(&["pytest"]);
    let block = code_block(&doc("README.md"), "<!-- own-project", "sh");
    let project = passing_project();
    let dir = tempfile::tempdir().unwrap();
    let daemon = HuddledProcess::start(&dir.path().join("huddle-data"), &[]).expect("huddled");
    let block = block.replace("~/src/myapp", project.path().to_str().unwrap());
    // The block ends with the team's status; then wait for both verdicts and stop the workers
    // as the README says.
    let closed = "huddle --json task ls | python3 -c \"import json, sys; \
        sys.exit(any(t['status'] in ('pending', 'in_progress') for t in json.load(sys.stdin)['tasks']))\"";
    let script = format!(
        "export HUDDLE_URL={url}\n{block}\
         for _ in $(seq 240); do {closed} && break; sleep 0.5; done\n\
         kill %1 %2\nwait\nhuddle --json task ls > tasks.json\n",
        url = daemon.url
    );
    let out = run_ok(bash(&script, dir.path()), "the README's own project", 240).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let tasks = std::fs::read_to_string(dir.path().join("tasks.json")).unwrap();
    let listed: Value = serde_json::from_str(&tasks).unwrap_or_else(|e| panic!("{e}: {tasks}"));
    let status = |id: &str| {
        listed["tasks"]
            .as_array()
            .expect("tasks")
            .iter()
            .find(|t| t["id"] == id)
            .and_then(|t| t["status"].as_str())
            .map(str::to_string)
    };
    assert_eq!(status("TEST-001").as_deref(), Some("completed"), "{stdout}");
    assert_eq!(
        status("QARUN-001").as_deref(),
        Some("completed"),
        "{stdout}"
    );
}

/// docs/api.md's walkthrough with curl, run as printed against a daemon whose data directory
/// holds the admin token; the verdict's order and its effect are checked through the API.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_curl_walkthrough_runs_as_written() {
    let block = code_block(&doc("docs/api.md"), "<!-- walkthrough", "sh");
    let daemon = TestDaemon::start().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("huddle-data")).unwrap();
    std::fs::write(dir.path().join("huddle-data/admin-token"), ADMIN).unwrap();
    let script = block.replace("http://127.0.0.1:7700", &daemon.url);
    let out = run_ok(bash(&script, dir.path()), "the curl walkthrough", 120).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    // curl prints each answer without a newline: the ready list is the last one.
    let last = stdout.rfind(r#"{"tasks":"#).expect("the ready list");
    let ready: Value = serde_json::from_str(&stdout[last..])
        .unwrap_or_else(|e| panic!("the ready list ends the output ({e}): {stdout}"));
    let ids: Vec<&str> = ready["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .filter_map(|t| t["id"].as_str())
        .collect();
    assert_eq!(ids, ["TEST-002"], "{stdout}");

    // The tester completes before it reports, as the "Order" rule says.
    let (complete, report) = (
        block.find("/complete").unwrap(),
        block.find("test_result").unwrap(),
    );
    assert!(
        complete < report,
        "the walkthrough completes TEST-001 before its test_result"
    );
    assert!(
        stdout.contains(r#""type":"test_result""#),
        "the report was stored: {stdout}"
    );
}

/// A team `qa` with a coordinator: the settings a client README's example reads.
async fn coordinator_env(cmd: &mut tokio::process::Command, daemon: &TestDaemon) {
    let coord = daemon.team("qa").await;
    cmd.env("HUDDLE_URL", &daemon.url)
        .env("HUDDLE_TOKEN", &coord.token)
        .env("HUDDLE_TEAM", "qa");
}

/// What both gate examples print (the open question, then the decision the task carries), and
/// what they leave: TEST-001 released, and a tester's claim of it showing the approval.
async fn assert_gate_approved(stdout: &str, daemon: &TestDaemon) {
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "HUMAN-001 May the tester drop the old table?",
            "HUMAN-001 approve after the backup"
        ],
        "{stdout}"
    );
    let tester = daemon.agent("qa", "tester", "tester").await;
    let task = tester
        .claim(serde_json::json!({}))
        .await
        .expect("TEST-001 is released");
    assert_eq!(task["id"], "TEST-001", "{task}");
    let gate = &task["gates"][0];
    let seen = serde_json::json!({
        "id": gate["id"], "kind": gate["kind"], "decision": gate["decision"], "answer": gate["answer"],
    });
    let approved = serde_json::json!({
        "id": "HUMAN-001", "kind": "approval", "decision": "approve", "answer": "after the backup",
    });
    assert_eq!(seen, approved, "{task}");
}

/// What both client examples print: the ready task, then each task's creation, and the end.
fn assert_prints_the_plan(stdout: &str) {
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "three lines, then it ends: {stdout}");
    assert!(
        lines[0].contains("TEST-001") && !lines[0].contains("QARUN"),
        "{stdout}"
    );
    assert!(
        lines[1].contains("task.created TEST-001 pending"),
        "{stdout}"
    );
    assert!(
        lines[2].contains("task.created QARUN-001 pending"),
        "{stdout}"
    );
}

/// Runs `program` (`name`, a file in `dir`) with `cmd` (`python3` with the client's sources, or
/// `node` in the project the client was installed into) against a new daemon with team `qa`;
/// returns what it printed and the daemon.
async fn run_example(
    mut cmd: tokio::process::Command,
    dir: &std::path::Path,
    name: &str,
    program: &str,
) -> (String, TestDaemon) {
    std::fs::write(dir.join(name), program).unwrap();
    let daemon = TestDaemon::start().await;
    cmd.arg(name).current_dir(dir);
    coordinator_env(&mut cmd, &daemon).await;
    let out = run_ok(cmd, name, 60).await;
    (String::from_utf8_lossy(&out.stdout).into_owned(), daemon)
}

/// The Python README's examples, each on a daemon of its own: the first, and the gate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_readmes_examples_end() {
    huddle_tests::python::require_modules(&["httpx", "httpx_sse"]);
    let readme = doc("clients/python/README.md");
    let dir = tempfile::tempdir().unwrap();
    let python = || {
        let mut cmd = tokio::process::Command::new("python3");
        cmd.env("PYTHONPATH", repo().join("clients/python/src"));
        cmd
    };
    let first = code_block(&readme, "<!-- example", "python");
    let (stdout, _daemon) = run_example(python(), dir.path(), "example.py", &first).await;
    assert_prints_the_plan(&stdout);
    let gates = code_block(&readme, "<!-- gates-example", "python");
    let (stdout, daemon) = run_example(python(), dir.path(), "gates.py", &gates).await;
    assert_gate_approved(&stdout, &daemon).await;
}

/// The TypeScript README's examples, from a project the client is installed into as the README
/// says, each on a daemon of its own: the first, and the gate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_readmes_examples_end() {
    let readme = doc("clients/typescript/README.md");
    let dir = tempfile::tempdir().unwrap();
    let app = install_client(dir.path()).await;
    let node = || tokio::process::Command::new("node");
    let first = code_block(&readme, "<!-- example.mjs", "js");
    let (stdout, _daemon) = run_example(node(), &app, "example.mjs", &first).await;
    assert_prints_the_plan(&stdout);
    let gates = code_block(&readme, "<!-- gates.mjs", "js");
    let (stdout, daemon) = run_example(node(), &app, "gates.mjs", &gates).await;
    assert_gate_approved(&stdout, &daemon).await;
}
