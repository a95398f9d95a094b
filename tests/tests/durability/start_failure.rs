//! A daemon that cannot start says why at once: the test harness builds it in the test, so a
//! bad data directory is an error naming it, not a 30 s wait for a readiness that never comes.

use huddle_tests::{test_settings, TestDaemon};

#[tokio::test]
async fn a_data_directory_that_is_a_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-directory");
    std::fs::write(&file, "x").unwrap();
    let err = match TestDaemon::try_start_on(test_settings(&file)).await {
        Ok(_) => panic!("a daemon started on a regular file"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("data directory"), "{err}");
    assert!(err.contains("not-a-directory"), "{err}");
}

#[tokio::test]
async fn a_started_daemon_answers_at_once_without_a_readiness_wait() {
    let d = TestDaemon::start().await;
    let ready = reqwest::get(format!("{}/readyz", d.url)).await.unwrap();
    assert_eq!(ready.status(), 200);
}
