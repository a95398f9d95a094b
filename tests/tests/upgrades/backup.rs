//! `huddled backup --to FILE` while the daemon serves writes: the copy is consistent, holds
//! every write acknowledged before the backup began, and a fresh daemon serves it.

use super::ADMIN;
use huddle_tests::process::{run_huddled, HuddledProcess};
use huddle_tests::Api;
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

const ENV: &[(&str, &str)] = &[("HUDDLE_ADMIN_TOKEN", ADMIN)];

#[tokio::test]
async fn a_backup_taken_during_writes_is_served_by_a_fresh_daemon() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = HuddledProcess::start(dir.path(), ENV).unwrap();
    let admin = Api::new(&daemon.url, ADMIN);
    admin
        .post("/v1/teams", json!({"name": "qa"}))
        .await
        .expect_status(201);
    let agent = admin
        .post(
            "/v1/teams/qa/agents",
            json!({"name": "coordinator", "role": "coordinator"}),
        )
        .await
        .expect_status(201);
    let api = Api::new(&daemon.url, agent.body["token"].as_str().unwrap()).in_team("qa");

    // A writer creating tasks one after another until told to stop.
    let acknowledged = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (api, acknowledged, stop) = (api.clone(), acknowledged.clone(), stop.clone());
        tokio::spawn(async move {
            let mut n = 1;
            while !stop.load(Ordering::SeqCst) {
                api.post(
                    &api.t("/tasks"),
                    json!({"id": format!("TEST-{n:03}"), "subject": "s"}),
                )
                .await
                .expect_status(201);
                acknowledged.store(n, Ordering::SeqCst);
                n += 1;
            }
        })
    };
    huddle_tests::eventually(60, "the writer created tasks", || {
        let acknowledged = acknowledged.clone();
        async move { acknowledged.load(Ordering::SeqCst) >= 20 }
    })
    .await;

    let copy = tempfile::tempdir().unwrap();
    let file = copy.path().join("backup.db");
    let before = acknowledged.load(Ordering::SeqCst);
    let (data, to) = (dir.path().to_path_buf(), file.clone());
    let (status, log) = tokio::task::spawn_blocking(move || {
        let args = [
            "backup",
            "--data-dir",
            data.to_str().unwrap(),
            "--to",
            to.to_str().unwrap(),
        ];
        run_huddled(&args, ENV)
    })
    .await
    .unwrap();
    let after = acknowledged.load(Ordering::SeqCst);
    stop.store(true, Ordering::SeqCst);
    writer.await.unwrap();
    assert!(status.success(), "huddled backup failed: {log}");

    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the backup holds token hashes");
        let conn = rusqlite::Connection::open(&file).unwrap();
        let check: String = conn
            .query_row("pragma integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok");
        let tasks: usize = conn
            .query_row("select count(*) from tasks", [], |r| r.get(0))
            .unwrap();
        // Everything acknowledged before the backup began; nothing that was never written.
        assert!(
            (before..=after + 1).contains(&tasks),
            "{tasks} tasks, {before} acknowledged before and {after} after"
        );
    }

    // A second backup to the same file is refused and leaves the first intact.
    let args = [
        "backup",
        "--data-dir",
        dir.path().to_str().unwrap(),
        "--to",
        file.to_str().unwrap(),
    ];
    let (status, _) = run_huddled(&args, ENV);
    assert!(!status.success(), "a backup over an existing file");

    // Restore: the backup becomes a fresh data directory's huddle.db.
    let restored = tempfile::tempdir().unwrap();
    std::fs::copy(&file, restored.path().join("huddle.db")).unwrap();
    let fresh = HuddledProcess::start(restored.path(), ENV).unwrap();
    let on_fresh = Api::new(&fresh.url, &api.token).in_team("qa");
    let first = on_fresh.get(&on_fresh.t("/tasks/TEST-001")).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let last = on_fresh.t(&format!("/tasks/TEST-{before:03}"));
    on_fresh.get(&last).await.expect_status(200);
    on_fresh
        .post(
            &on_fresh.t("/tasks"),
            json!({"id": "RESTORED-001", "subject": "after the restore"}),
        )
        .await
        .expect_status(201);
}

#[tokio::test]
async fn backup_refuses_a_postgres_store_and_names_pg_dump() {
    let (status, log) = run_huddled(
        &["backup", "--to", "/nonexistent/backup.db"],
        &[("HUDDLE_DATABASE_URL", "postgres://nobody@127.0.0.1:1/none")],
    );
    assert!(!status.success());
    assert!(log.contains("pg_dump"), "{log}");
}
