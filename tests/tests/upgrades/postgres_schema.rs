//! PostgreSQL: `huddled migrate`, `--no-migrate` replicas, and a database a newer release
//! migrated (an extra applied migration that added a column and a table).

use super::{serves, ADMIN};
use huddle_tests::process::{run_huddled, HuddledProcess};
use sqlx::Connection;

fn env(url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("HUDDLE_DATABASE_URL", url.to_string()),
        ("HUDDLE_ADMIN_TOKEN", ADMIN.to_string()),
    ]
}

fn as_refs<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

async fn execute(url: &str, sql: &str) {
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    sqlx::raw_sql(sql)
        .execute(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    conn.close().await.unwrap();
}

#[tokio::test]
async fn a_no_migrate_replica_refuses_an_unmigrated_database_until_huddled_migrate_ran() {
    let url = huddle_tests::pg::empty_database().await;
    let env = env(&url);
    let dir = tempfile::tempdir().unwrap();
    let refused = HuddledProcess::start_args(dir.path(), &["--no-migrate"], &as_refs(&env));
    let log = refused
        .err()
        .expect("a --no-migrate replica refuses an empty database");
    assert!(log.contains("huddled migrate"), "{log}");

    let (status, log) = run_huddled(&["migrate"], &as_refs(&env));
    assert!(status.success(), "huddled migrate failed: {log}");
    // Applying again finds nothing to do.
    let (status, log) = run_huddled(&["migrate"], &as_refs(&env));
    assert!(status.success(), "a second huddled migrate failed: {log}");

    let replica = HuddledProcess::start_args(dir.path(), &["--no-migrate"], &as_refs(&env))
        .unwrap_or_else(|e| panic!("the replica did not start after migrate: {e}"));
    serves(&replica.url, "qa").await;
}

#[tokio::test]
async fn this_release_serves_a_database_a_newer_release_expanded() {
    let url = huddle_tests::pg::empty_database().await;
    let env = env(&url);
    let (status, log) = run_huddled(&["migrate"], &as_refs(&env));
    assert!(status.success(), "huddled migrate failed: {log}");
    // What a newer release's expand-only migration leaves behind.
    execute(
        &url,
        "alter table tasks add column future_note text not null default '';
         create table future_things (id bigint primary key);
         insert into _sqlx_migrations (version, description, success, checksum, execution_time)
         values (99990001, 'a newer release', true, '\\x00', 1);",
    )
    .await;

    let dir = tempfile::tempdir().unwrap();
    let migrating = HuddledProcess::start(dir.path(), &as_refs(&env))
        .unwrap_or_else(|e| panic!("this release refused the newer schema: {e}"));
    serves(&migrating.url, "qa").await;
    let replica = HuddledProcess::start_args(dir.path(), &["--no-migrate"], &as_refs(&env))
        .unwrap_or_else(|e| panic!("a --no-migrate replica refused the newer schema: {e}"));
    serves(&replica.url, "dev").await;
    let (status, log) = run_huddled(&["migrate"], &as_refs(&env));
    assert!(status.success(), "huddled migrate on a newer schema: {log}");
}

#[tokio::test]
async fn a_release_that_contracted_the_schema_is_refused_by_older_ones() {
    let url = huddle_tests::pg::empty_database().await;
    let env = env(&url);
    let (status, log) = run_huddled(&["migrate"], &as_refs(&env));
    assert!(status.success(), "huddled migrate failed: {log}");
    execute(
        &url,
        "insert into _sqlx_migrations (version, description, success, checksum, execution_time)
         values (99990002, 'a contracting release', true, '\\x00', 1);
         create table if not exists huddle_schema_compat (compatible_from bigint not null);
         delete from huddle_schema_compat;
         insert into huddle_schema_compat values (99990002);",
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let refused = HuddledProcess::start(dir.path(), &as_refs(&env));
    let log = refused
        .err()
        .expect("an older release refuses a contracted schema");
    assert!(log.contains("upgrade this replica"), "{log}");
}
