//! The data directory is 0700 and the database files 0600 whatever the umask; an admin-token
//! file that is a symlink or readable by others is refused at start.

use huddle_tests::{test_settings, TestDaemon};
use nix::sys::stat::{umask, Mode};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Settings without a configured admin token, so the daemon uses `<data_dir>/admin-token`.
fn file_token_settings(dir: &Path) -> huddle_daemon::config::Settings {
    let mut s = test_settings(dir);
    s.server.admin_token = String::new();
    s
}

#[tokio::test]
async fn the_data_directory_and_its_files_are_private_whatever_the_umask() {
    // Each test runs in its own process under nextest, so the umask is this test's alone.
    umask(Mode::empty());
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    // A directory left open by hand is closed again at start.
    std::fs::create_dir(&data).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut d = TestDaemon::start_on(file_token_settings(&data)).await;
    let admin = std::fs::read_to_string(data.join("admin-token")).unwrap();
    let api = huddle_tests::Api::new(&d.url, admin.trim());
    api.post("/v1/teams", serde_json::json!({"name": "qa"}))
        .await
        .expect_status(201);
    assert_eq!(mode(&data), 0o700, "data directory");
    for file in ["huddle.db", "huddle.db-wal", "huddle.db-shm", "admin-token"] {
        assert_eq!(mode(&data.join(file)), 0o600, "{file}");
    }
    d.stop().await;
    // Files left open by an older version are closed again at the next start.
    std::fs::set_permissions(
        data.join("huddle.db"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    TestDaemon::start_on(file_token_settings(&data)).await;
    assert_eq!(mode(&data.join("huddle.db")), 0o600);
}

#[tokio::test]
async fn an_admin_token_file_that_others_can_read_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let token_file = data.join("admin-token");
    std::fs::write(&token_file, "hud_0123456789abcdef0123456789abcdef\n").unwrap();
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let error = TestDaemon::try_start_on(file_token_settings(&data))
        .await
        .err()
        .expect("a world-readable admin-token file is refused")
        .to_string();
    assert!(
        error.contains("0644") && error.contains("chmod 600"),
        "{error}"
    );
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    TestDaemon::start_on(file_token_settings(&data)).await;
}

#[tokio::test]
async fn an_admin_token_file_that_is_a_symlink_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let elsewhere = root.path().join("elsewhere");
    std::fs::write(&elsewhere, "hud_0123456789abcdef0123456789abcdef\n").unwrap();
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::symlink(&elsewhere, data.join("admin-token")).unwrap();
    let error = TestDaemon::try_start_on(file_token_settings(&data))
        .await
        .err()
        .expect("a symlinked admin-token file is refused")
        .to_string();
    assert!(error.contains("symlink"), "{error}");
    // A dangling symlink is not followed to create a token either.
    std::fs::remove_file(&elsewhere).unwrap();
    assert!(TestDaemon::try_start_on(file_token_settings(&data))
        .await
        .is_err());
    assert!(
        !elsewhere.exists(),
        "a token was written through the symlink"
    );
}
