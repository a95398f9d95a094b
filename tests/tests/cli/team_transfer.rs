//! `huddle export`, `huddle import` and `huddle team delete` as real processes: a team saved
//! to a file, deleted (only with `--yes`), and brought back under another name with its tokens.

use huddle_tests::cli::Huddle;
use huddle_tests::{TestDaemon, ADMIN};
use std::os::unix::fs::PermissionsExt;

#[tokio::test]
async fn a_team_is_exported_deleted_and_imported_back_under_a_new_name() {
    let d = TestDaemon::start().await;
    let coord = d.team("qa").await;
    coord
        .post(
            &coord.t("/tasks"),
            serde_json::json!([{"id": "TEST-001", "subject": "keep me"}]),
        )
        .await
        .expect_status(201);
    let admin = Huddle::new(&d.url, ADMIN, "qa");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("qa.jsonl");
    let path = file.to_str().unwrap();
    admin.ok(&["export", "--output", path]).await;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "an export holds secrets");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with(r#"{"kind":"team","version":1,"name":"qa""#),
        "{text}"
    );
    // Stdout gives the same bytes.
    assert_eq!(admin.ok(&["export"]).await, text);
    // Refused to overwrite, refused without --yes.
    admin.fails(&["export", "--output", path]).await;
    let (_, err) = admin.fails(&["team", "delete", "qa"]).await;
    assert!(err.contains("--yes"), "{err}");
    assert_eq!(
        admin.ok(&["team", "delete", "qa", "--yes"]).await.trim(),
        "deleted team qa"
    );
    coord
        .get(&coord.t("/tasks"))
        .await
        .expect_error(401, "unauthorized");
    let imported = admin.json(&["import", path, "--name", "qa-restored"]).await;
    assert_eq!(imported["name"], "qa-restored");
    // The coordinator's token works in the restored team, which holds its task.
    let restored = huddle_tests::Api::new(&d.url, &coord.token).in_team("qa-restored");
    let tasks = restored
        .get(&restored.t("/tasks"))
        .await
        .expect_status(200)
        .body;
    assert_eq!(tasks["tasks"][0]["subject"], "keep me");
    // From stdin, the name taken from the file: the tokens are in use now.
    let mut import = admin.command(&["import"]);
    import.stdin(std::fs::File::open(&file).unwrap());
    let out = import.output().await.unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("409") || err.contains("already in use"),
        "{err}"
    );
}
