//! Every fix is visible and every verdict names what it ran on: `impl_progress` says when a
//! full run starts and how it ended, a fix's `impl_progress` and the `test_result` carry the
//! changed files and the unified diff, the completed task's result holds the evidence (run id
//! in the test history under the task's project name, git HEAD, diff hash, counts with errors
//! apart), and the task is closed before its `test_result` is on the bus.

use futures::StreamExt;
use huddle_sdk::wire::TaskStatus;
use huddle_sdk::StreamOptions;
use huddle_tests::llm::projects::{pytest_project, SHOUT_BUG, SHOUT_OK, STRINGS_PY};
use huddle_tests::llm::stub::fix;
use huddle_tests::llm::team::{settings, team};
use huddle_tests::llm::LlmStub;
use serde_json::json;
use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fix_is_on_the_bus_with_its_diff_and_the_result_names_the_tree_it_ran_on() {
    huddle_tests::llm::projects::require_tool("git");
    let project = pytest_project(true, false);
    git(&project.root, &["init", "-q"]);
    git(&project.root, &["add", "-A"]);
    git(&project.root, &["commit", "-q", "-m", "buggy"]);
    let head = git(&project.root, &["rev-parse", "HEAD"]);

    let stub = LlmStub::start(
        "sk-stub",
        vec![fix(&[("pkg/strings.py", SHOUT_BUG, SHOUT_OK)])],
    )
    .await;
    let t = team().await;
    let mut events = t.coord.stream_events(&StreamOptions::default()).unwrap();
    t.task("TEST-001", json!({"project": "shop-api"})).await;
    t.start_tester(settings(&project.root, Some(&stub)));
    let task = t.closed("TEST-001").await;
    assert_eq!(
        task.status,
        TaskStatus::Completed,
        "{:?}",
        task.failure_reason
    );
    // The fix is on the task's branch, the checkout as it was.
    let fixed = git(&project.root, &["show", "huddle/TEST-001:pkg/strings.py"]);
    assert_eq!(format!("{fixed}\n"), STRINGS_PY);
    assert!(project.read("pkg/strings.py").contains(SHOUT_BUG));

    // Where the task works, then full-run progress before any repair, then the fix with its
    // diff.
    let progress = t.messages("impl_progress").await;
    assert_eq!(progress[0].data["phase"], "workspace");
    assert_eq!(progress[0].data["base"], head.as_str());
    assert_eq!(progress[1].data["phase"], "fullRunStarted");
    assert_eq!(progress[2].data["phase"], "fullRunFinished");
    assert_eq!(
        progress[2].summary,
        "TEST-001: full run finished: 6 of 7 run passed, 1 failed"
    );
    let fixed = progress
        .iter()
        .find(|m| m.data.get("iteration").is_some())
        .expect("a fix progress note");
    assert_eq!(fixed.data["changedFiles"], json!(["pkg/strings.py"]));
    let diff = fixed.data["diff"].as_str().unwrap();
    assert!(
        diff.starts_with("--- a/pkg/strings.py\n+++ b/pkg/strings.py\n@@")
            && diff.contains(&format!("-{SHOUT_BUG}"))
            && diff.contains(&format!("+{SHOUT_OK}")),
        "{diff}"
    );
    assert!(fixed.data.get("testFilesChanged").is_none());

    // The verdict: the same change, and the evidence.
    let d = t.one("test_result").await.data;
    assert_eq!(d["changedFiles"], json!(["pkg/strings.py"]));
    assert_eq!(d["diff"], fixed.data["diff"]);
    assert_eq!(d["counts"], "7 of 7 run passed");
    let e = &d["evidence"];
    assert_eq!(e["gitHead"], head.as_str());
    assert_eq!(e["diffHash"].as_str().map(str::len), Some(64), "{e:#}");
    assert_eq!(
        e["counts"],
        json!({"total": 7, "passed": 7, "failed": 0, "errors": 0, "skipped": 0, "vanished": 0})
    );
    assert_eq!(e["vanished"], json!([]));
    // The history keeps the runs under the task's project name, not the directory's.
    let history = t.coord.test_history(Some("shop-api")).await.unwrap();
    let last = history
        .runs
        .last()
        .expect("the verdict run is in the history");
    assert_eq!(e["runId"], last.id, "{e:#}");
    assert_eq!(e["tree"], last.tree.as_str());
    assert_eq!(e["project"], "shop-api");
    // The task's result holds the same, without the markdown.
    let result = task.result.expect("a result");
    assert_eq!(result["evidence"], *e);
    assert_eq!(result["diff"], d["diff"]);
    assert!(result.get("summary").is_none());

    // The task closed before its verdict reached the bus.
    let mut order = Vec::new();
    while let Some(ev) = events.next().await {
        let ev = ev.unwrap();
        let kind = match (ev.kind.as_str(), ev.data["type"].as_str()) {
            ("task.completed", _) => "completed",
            ("message.posted", Some("test_result")) => "test_result",
            _ => continue,
        };
        order.push(kind);
        if kind == "test_result" {
            break;
        }
    }
    assert_eq!(order, ["completed", "test_result"]);
}
