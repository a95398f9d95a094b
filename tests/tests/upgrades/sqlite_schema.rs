//! SQLite: `huddled migrate`, `--no-migrate`, and a database file a newer release migrated.

use super::{serves, ADMIN};
use huddle_tests::process::{run_huddled, HuddledProcess};

const ENV: &[(&str, &str)] = &[("HUDDLE_ADMIN_TOKEN", ADMIN)];

#[tokio::test]
async fn no_migrate_refuses_a_new_data_directory_until_huddled_migrate_ran() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let log = HuddledProcess::start_args(dir.path(), &["--no-migrate"], ENV)
        .err()
        .expect("--no-migrate refuses an unmigrated database");
    assert!(log.contains("huddled migrate"), "{log}");
    let (status, log) = run_huddled(&["migrate", "--data-dir", data], ENV);
    assert!(status.success(), "huddled migrate failed: {log}");
    let daemon = HuddledProcess::start_args(dir.path(), &["--no-migrate"], ENV)
        .unwrap_or_else(|e| panic!("did not start after migrate: {e}"));
    serves(&daemon.url, "qa").await;
}

#[tokio::test]
async fn this_release_serves_a_database_file_a_newer_release_expanded() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let (status, log) = run_huddled(&["migrate", "--data-dir", data], ENV);
    assert!(status.success(), "huddled migrate failed: {log}");
    let conn = rusqlite::Connection::open(dir.path().join("huddle.db")).unwrap();
    conn.execute_batch(
        "alter table tasks add column future_note text not null default '';
         create table future_things (id integer primary key);
         insert into schema_migrations (version, applied_at) values (99990001, 0);",
    )
    .unwrap();
    drop(conn);
    let daemon = HuddledProcess::start(dir.path(), ENV)
        .unwrap_or_else(|e| panic!("this release refused the newer schema: {e}"));
    serves(&daemon.url, "qa").await;
}

#[tokio::test]
async fn a_release_that_contracted_the_schema_is_refused_by_older_ones() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let (status, log) = run_huddled(&["migrate", "--data-dir", data], ENV);
    assert!(status.success(), "huddled migrate failed: {log}");
    let conn = rusqlite::Connection::open(dir.path().join("huddle.db")).unwrap();
    conn.execute_batch(
        "insert into schema_migrations (version, applied_at) values (99990002, 0);
         create table if not exists huddle_schema_compat (compatible_from integer not null);
         delete from huddle_schema_compat;
         insert into huddle_schema_compat values (99990002);",
    )
    .unwrap();
    drop(conn);
    let log = HuddledProcess::start(dir.path(), ENV)
        .err()
        .expect("an older release refuses a contracted schema");
    assert!(log.contains("upgrade this replica"), "{log}");
}
