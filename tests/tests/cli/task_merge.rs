//! `huddle task merge` on a real repository: a task's fix branch (named in its result, as a
//! worker in a worktree leaves it) is merged, or replayed with `--rebase`; a conflict leaves the
//! checkout as it was, fails the command and tells the coordinators with `fix_required`.

use huddle_sdk::wire::{ClaimRequest, NewTask};
use huddle_sdk::{Client, MessageQuery};
use huddle_tests::cli::Huddle;
use huddle_tests::TestDaemon;
use serde_json::{json, Value};
use std::path::Path;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A repository whose `main` has `notes.txt` and whose `huddle/TEST-001` changes its first line
/// in one commit: (checkout, base, fix commit).
fn repository() -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("notes.txt"), "one\ntwo\n").unwrap();
    git(root, &["init", "-q", "-b", "main"]);
    // The person's identity, which a merge commit is made with.
    git(root, &["config", "user.name", "Person"]);
    git(root, &["config", "user.email", "person@example.com"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "start"]);
    let base = git(root, &["rev-parse", "HEAD"]);
    git(root, &["checkout", "-q", "-b", "huddle/TEST-001"]);
    std::fs::write(root.join("notes.txt"), "ONE\ntwo\n").unwrap();
    git(root, &["commit", "-q", "-am", "TEST-001: fixed"]);
    let fix = git(root, &["rev-parse", "HEAD"]);
    git(root, &["checkout", "-q", "main"]);
    (dir, base, fix)
}

/// A daemon, team `qa`, TEST-001 completed by a tester with the branch in its result; the
/// coordinator's `huddle` and SDK client.
async fn completed_task(base: &str, fix: &str) -> (TestDaemon, Huddle, Client) {
    completed_with(json!({"branch": "huddle/TEST-001", "commit": fix, "base": base})).await
}

/// The same with `result` as the tester wrote it.
async fn completed_with(result: Value) -> (TestDaemon, Huddle, Client) {
    let d = TestDaemon::start().await;
    let coord = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    let coord_client = Client::new(&d.url, &coord.token).unwrap().with_team("qa");
    let tester_client = Client::new(&d.url, &tester.token).unwrap().with_team("qa");
    coord_client
        .create_task(&NewTask {
            id: Some("TEST-001".into()),
            subject: "fix the notes".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let held = tester_client.claim(&ClaimRequest::default()).await.unwrap();
    assert_eq!(held.unwrap().id, "TEST-001");
    tester_client
        .complete("TEST-001", Some(result))
        .await
        .unwrap();
    let huddle = Huddle::new(&d.url, &coord.token, "qa");
    (d, huddle, coord_client)
}

#[tokio::test]
async fn a_task_branch_is_merged_or_replayed_into_the_current_branch() {
    let (dir, base, fix) = repository();
    let (_d, huddle, _) = completed_task(&base, &fix).await;
    let root = dir.path().to_str().unwrap();
    let shown = huddle.ok(&["task", "show", "TEST-001"]).await;
    assert!(shown.contains("fix branch   huddle/TEST-001 at"), "{shown}");

    let out = huddle
        .ok(&["task", "merge", "TEST-001", "--project", root])
        .await;
    assert!(out.contains("huddle/TEST-001 merged"), "{out}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "ONE\ntwo\n"
    );
    let parents = git(dir.path(), &["log", "-1", "--format=%P"]);
    assert_eq!(parents, format!("{base} {fix}"), "a merge commit");

    // --rebase on a fresh main: the fix's commit replayed, history linear.
    git(dir.path(), &["reset", "-q", "--hard", &base]);
    huddle
        .ok(&["task", "merge", "TEST-001", "--rebase", "--project", root])
        .await;
    let parents = git(dir.path(), &["log", "-1", "--format=%P"]);
    assert_eq!(parents, base, "one parent: replayed, not merged");
    assert_eq!(
        git(dir.path(), &["log", "-1", "--format=%s"]),
        "TEST-001: fixed"
    );
}

#[tokio::test]
async fn a_conflict_leaves_the_checkout_as_it_was_and_tells_the_coordinators() {
    let (dir, base, fix) = repository();
    let (_d, huddle, coord) = completed_task(&base, &fix).await;
    // Someone changed the same line on main meanwhile.
    std::fs::write(dir.path().join("notes.txt"), "uno\ntwo\n").unwrap();
    git(dir.path(), &["commit", "-q", "-am", "meanwhile"]);
    let head = git(dir.path(), &["rev-parse", "HEAD"]);

    let root = dir.path().to_str().unwrap();
    for extra in [&[][..], &["--rebase"]] {
        let mut args = vec!["task", "merge", "TEST-001", "--project", root];
        args.extend_from_slice(extra);
        let (code, err) = huddle.fails(&args).await;
        assert_ne!(code, 0);
        assert!(err.contains("conflicts with main in notes.txt"), "{err}");
        assert!(err.contains("the checkout is as it was"), "{err}");
        assert_eq!(git(dir.path(), &["rev-parse", "HEAD"]), head);
        assert_eq!(git(dir.path(), &["status", "--porcelain"]), "");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
            "uno\ntwo\n"
        );
    }
    let told: Vec<Value> = coord
        .list_all_messages(&MessageQuery {
            kind: Some("fix_required".into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.data)
        .collect();
    assert_eq!(told.len(), 2, "{told:?}");
    assert_eq!(told[0]["category"], "merge_conflict");
    assert_eq!(told[0]["taskId"], "TEST-001");
    assert_eq!(told[0]["files"], json!(["notes.txt"]));
    assert_eq!(told[0]["branch"], "huddle/TEST-001");
}

#[tokio::test]
async fn a_task_without_a_branch_is_a_clear_error() {
    let (dir, base, _) = repository();
    let d = TestDaemon::start().await;
    let coord = d.team("qa").await;
    let coord_client = Client::new(&d.url, &coord.token).unwrap().with_team("qa");
    coord_client
        .create_task(&NewTask {
            id: Some("TEST-002".into()),
            subject: "not done".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let huddle = Huddle::new(&d.url, &coord.token, "qa");
    let root = dir.path().to_str().unwrap();
    let (_, err) = huddle
        .fails(&["task", "merge", "TEST-002", "--project", root])
        .await;
    assert!(err.contains("names no fix branch"), "{err}");
    assert!(err.contains("has no result yet"), "{err}");
    assert_eq!(git(dir.path(), &["rev-parse", "HEAD"]), base);
}

#[tokio::test]
async fn a_result_that_would_smuggle_an_option_into_git_is_refused() {
    let (dir, base, fix) = repository();
    let root = dir.path().to_str().unwrap();
    let marker = dir.path().join("pwned");
    for (result, expected) in [
        (
            json!({"branch": format!("--output={}", marker.display()), "commit": fix, "base": base}),
            "a branch git would not take as one",
        ),
        (
            json!({"branch": "huddle/TEST-001", "commit": fix, "base": "--exec=touch pwned"}),
            "base that is not a commit id",
        ),
        (
            json!({"branch": "huddle/TEST-001", "commit": "HEAD~1", "base": base}),
            "commit that is not a commit id",
        ),
    ] {
        let (_d, huddle, _) = completed_with(result).await;
        let (_, err) = huddle
            .fails(&["task", "merge", "TEST-001", "--rebase", "--project", root])
            .await;
        assert!(err.contains(expected), "{err}");
        assert_eq!(git(dir.path(), &["rev-parse", "HEAD"]), base);
        assert!(!marker.exists());
    }
}
