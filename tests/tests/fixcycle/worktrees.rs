//! A workspace per claim (`huddle_sdk::workspace`): testers on one git repository each work in
//! a worktree of their own, in parallel; a fix that meets the gate arrives as a commit on
//! `huddle/<task id>` holding only that task's files; the user's checkout is never edited.

use huddle_sdk::wire::TaskStatus;
use huddle_tests::llm::projects::{pytest_project, Project, SHOUT_BUG, SHOUT_OK};
use huddle_tests::llm::stub::{fix, Scripted};
use huddle_tests::llm::team::{settings, team, Team};
use huddle_tests::llm::LlmStub;
use huddle_tests::{eventually, ADMIN};
use serde_json::json;
use std::sync::Arc;

const ADD_OK: &str = "    return a + b\n";
const ADD_BUG: &str = "    return a - b\n";

/// The pytest fixture with a bug in `pkg/strings.py` (shout) and one in `pkg/calc.py` (add),
/// committed on `main` with the usual ignores.
fn repository_with_two_bugs() -> Project {
    let project = pytest_project(true, false);
    let calc = project.read("pkg/calc.py").replace(ADD_OK, ADD_BUG);
    project.write("pkg/calc.py", &calc);
    project.write(".gitignore", ".huddle/\n__pycache__/\n.pytest_cache/\n");
    project.git(&["init", "-q", "-b", "main"]);
    project.git(&["add", "-A"]);
    project.git(&["commit", "-q", "-m", "two bugs"]);
    project
}

/// The checkout's files, git's own left out.
fn files(project: &Project) -> std::collections::BTreeMap<String, String> {
    let mut tree = project.tree();
    tree.retain(|path, _| !path.starts_with(".git/"));
    tree
}

/// The worktree of each task's `workspace` note, in order.
async fn workspaces(t: &Team) -> Vec<String> {
    t.messages("impl_progress")
        .await
        .into_iter()
        .filter(|m| m.data["phase"] == "workspace")
        .map(|m| m.data["workspace"].as_str().unwrap().to_string())
        .collect()
}

/// `git args…` in `dir`, its output.
fn git_out(project: &Project, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(&project.root)
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_testers_on_one_repository_repair_in_parallel_each_on_its_own_branch() {
    let project = repository_with_two_bugs();
    let before = files(&project);
    let head = git_out(&project, &["rev-parse", "HEAD"]);
    // Each reply is held until the test opens its gate: both testers are inside their cycles
    // at once before either gets a fix.
    let (first, second) = (
        Arc::new(tokio::sync::Notify::new()),
        Arc::new(tokio::sync::Notify::new()),
    );
    let by_prompt = || {
        Scripted::ByPrompt(vec![
            (
                "test_strings.py",
                fix(&[("pkg/strings.py", SHOUT_BUG, SHOUT_OK)]),
            ),
            ("test_calc.py", fix(&[("pkg/calc.py", ADD_BUG, ADD_OK)])),
        ])
    };
    let stub = LlmStub::start(
        "sk-stub",
        vec![
            Scripted::Gate(first.clone(), Box::new(by_prompt())),
            Scripted::Gate(second.clone(), Box::new(by_prompt())),
        ],
    )
    .await;
    let t = team().await;
    t.task(
        "TEST-001",
        json!({"paths": ["tests/test_strings.py"], "scope": ["pkg/strings.py"]}),
    )
    .await;
    t.task(
        "TEST-002",
        json!({"paths": ["tests/test_calc.py"], "scope": ["pkg/calc.py"]}),
    )
    .await;
    t.start_tester(settings(&project.root, Some(&stub)));
    t.start_tester(settings(&project.root, Some(&stub)));

    eventually(300, "both testers ask the model at once", || async {
        stub.requests().len() == 2
    })
    .await;
    for id in ["TEST-001", "TEST-002"] {
        let task = t.coord.get_task(id).await.unwrap();
        assert_eq!(task.status, TaskStatus::InProgress, "{id} while both wait");
    }
    let places = workspaces(&t).await;
    assert_eq!(places.len(), 2, "{places:?}");
    assert_ne!(places[0], places[1], "each task has a worktree of its own");
    // /metrics shows each held task's worktree and branch (from the heartbeats).
    let scrape = || async {
        reqwest::Client::new()
            .get(format!("{}/metrics", t.daemon.url))
            .bearer_auth(ADMIN)
            .send()
            .await
            .expect("scrape")
            .text()
            .await
            .expect("body")
    };
    eventually(60, "both workspaces on /metrics", || async {
        let text = scrape().await;
        ["TEST-001", "TEST-002"].iter().all(|id| {
            text.lines().any(|l| {
                l.starts_with("huddle_task_workspace{")
                    && l.contains(&format!("task=\"{id}\""))
                    && l.contains(&format!("branch=\"huddle/{id}\""))
                    && places
                        .iter()
                        .any(|p| l.contains(&format!("workspace=\"{p}\"")))
            })
        })
    })
    .await;
    first.notify_one();
    second.notify_one();

    for (id, file) in [("TEST-001", "pkg/strings.py"), ("TEST-002", "pkg/calc.py")] {
        let task = t.closed(id).await;
        assert_eq!(
            task.status,
            TaskStatus::Completed,
            "{:?}",
            task.failure_reason
        );
        let result = task.result.unwrap();
        let branch = format!("huddle/{id}");
        assert_eq!(result["branch"], json!(branch), "{result}");
        assert_eq!(result["base"], json!(head));
        let commit = result["commit"].as_str().unwrap();
        assert_eq!(git_out(&project, &["rev-parse", &branch]), commit);
        let changed = git_out(&project, &["diff", "--name-only", &head, &branch]);
        assert_eq!(changed, file, "{id}'s branch holds only its own fix");
        let message = git_out(&project, &["log", "-1", "--format=%B", &branch]);
        assert!(message.starts_with(id), "{message}");
        assert!(message.contains("Huddle-Model: stub-model"), "{message}");
    }
    let text = scrape().await;
    assert!(
        !text.contains("huddle_task_workspace{"),
        "closed tasks leave /metrics: {text}"
    );
    let verdicts = t.messages("test_result").await;
    assert!(
        verdicts.iter().all(|m| m.data["branch"].is_string()),
        "test_result names the branch"
    );
    // The checkout: the same files, nothing uncommitted, still on main at its commit.
    assert_eq!(files(&project), before, "the user's checkout was edited");
    assert_eq!(git_out(&project, &["status", "--porcelain"]), "");
    assert_eq!(git_out(&project, &["rev-parse", "HEAD"]), head);
    assert_eq!(git_out(&project, &["branch", "--show-current"]), "main");
    // Merging both branches gives the repaired project.
    let merge = |branch: &str| project.git(&["merge", "-q", "--no-edit", branch]);
    merge("huddle/TEST-001");
    merge("huddle/TEST-002");
    assert_eq!(project.read("pkg/calc.py").matches(ADD_OK).count(), 1);
    assert!(project.read("pkg/strings.py").contains(SHOUT_OK));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_verdict_leaves_no_branch_and_the_next_task_gets_a_clean_worktree() {
    let project = repository_with_two_bugs();
    // The model's edit makes things no better: TEST-001 fails its gate.
    let useless = fix(&[("pkg/strings.py", SHOUT_BUG, "    return text + \"?\"\n")]);
    // One reply only: TEST-002's model calls get errors, so no edit reaches its worktree.
    let stub = LlmStub::start("sk-stub", vec![useless]).await;
    let t = team().await;
    t.task(
        "TEST-001",
        json!({"paths": ["tests/test_strings.py"], "cycle": {"maxIterations": 1}}),
    )
    .await;
    t.start_tester(settings(&project.root, Some(&stub)));
    let failed = t.closed("TEST-001").await;
    assert_eq!(failed.status, TaskStatus::Failed);
    let branches = git_out(&project, &["branch", "--list", "huddle/*"]);
    assert_eq!(branches, "", "a failed task leaves no branch");
    let worktree = workspaces(&t).await.remove(0);

    // Leftovers in the worktree: a tracked file changed (calc's bug fixed) and an untracked
    // test file. The next task takes the same worktree, reset and cleaned: neither counts.
    let worktree = std::path::Path::new(&worktree);
    let calc = std::fs::read_to_string(worktree.join("pkg/calc.py")).unwrap();
    std::fs::write(worktree.join("pkg/calc.py"), calc.replace(ADD_BUG, ADD_OK)).unwrap();
    std::fs::write(
        worktree.join("tests/test_junk.py"),
        "def test_junk():\n    assert True\n",
    )
    .unwrap();
    t.task("TEST-002", json!({})).await;
    let next = t.closed("TEST-002").await;
    assert_eq!(next.status, TaskStatus::Failed, "no fix for either bug");
    let places = workspaces(&t).await;
    let expected = worktree.to_string_lossy().into_owned();
    assert_eq!(places, vec![expected.clone(), expected], "reused");
    let counts = &next.result.unwrap()["evidence"]["counts"];
    assert_eq!(counts["total"], 7, "no leftover test ran: {counts}");
    assert_eq!(
        counts["passed"], 1,
        "calc's bug is back at the base: {counts}"
    );
    assert_eq!(project.read("pkg/calc.py").matches(ADD_BUG).count(), 1);
}
