//! PostgreSQL for tests: a fresh database per test on the server `scripts/test-postgres`
//! started (`./scripts/test` starts it; its URL comes from `HUDDLE_TEST_DATABASE_URL` or the
//! file that script writes). No server is a loud failure, never a skip.

use sqlx::Connection;
use std::path::PathBuf;

/// The test server's maintenance URL.
fn server_url() -> String {
    if let Ok(url) = std::env::var("HUDDLE_TEST_DATABASE_URL") {
        if !url.trim().is_empty() {
            return url;
        }
    }
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/test-postgres/url");
    match std::fs::read_to_string(&file) {
        Ok(url) => url.trim().to_string(),
        Err(_) => panic!(
            "PostgreSQL tests need a server: run `scripts/test-postgres start` (./scripts/test does), \
             or set HUDDLE_TEST_DATABASE_URL=postgres://user@host:port/postgres"
        ),
    }
}

/// Creates an empty database and returns its URL.
pub async fn fresh_database() -> String {
    let server = server_url();
    let name = format!("t_{}", uuid::Uuid::new_v4().simple());
    let mut conn = sqlx::PgConnection::connect(&server)
        .await
        .unwrap_or_else(|e| panic!("connecting to the test PostgreSQL at {server}: {e}"));
    sqlx::query(&format!("create database {name}"))
        .execute(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("creating database {name}: {e}"));
    let _ = conn.close().await;
    match server.rsplit_once('/') {
        Some((base, _)) => format!("{base}/{name}"),
        None => panic!("unexpected test database URL {server}"),
    }
}
