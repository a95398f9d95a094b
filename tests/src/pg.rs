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

/// A database with this build's migrations applied, cloned from a template that is migrated once
/// per server and set of migrations (most tests want a daemon's schema, not to watch it being
/// made); returns its URL.
pub async fn fresh_database() -> String {
    let server = server_url();
    let template = migrated_template(&server).await;
    create_database(&server, &format!("template {template}")).await
}

/// An empty database (no schema), for tests of migrating itself; returns its URL.
pub async fn empty_database() -> String {
    create_database(&server_url(), "").await
}

async fn connect(server: &str) -> sqlx::PgConnection {
    sqlx::PgConnection::connect(server)
        .await
        .unwrap_or_else(|e| panic!("connecting to the test PostgreSQL at {server}: {e}"))
}

fn database_url(server: &str, name: &str) -> String {
    match server.rsplit_once('/') {
        Some((base, _)) => format!("{base}/{name}"),
        None => panic!("unexpected test database URL {server}"),
    }
}

async fn create_database(server: &str, options: &str) -> String {
    let name = format!("t_{}", uuid::Uuid::new_v4().simple());
    let mut conn = connect(server).await;
    // A clone is refused while anything is connected to its template; only the template's own
    // build connects to it, and its connections are gone before it is marked ready, so this is
    // a safety net for a server shared with a developer's psql session.
    let mut attempts = 0;
    loop {
        match sqlx::query(&format!("create database {name} {options}"))
            .execute(&mut conn)
            .await
        {
            Ok(_) => break,
            Err(e) if attempts < 50 && is_object_in_use(&e) => {
                attempts += 1;
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            Err(e) => panic!("creating database {name} {options}: {e}"),
        }
    }
    let _ = conn.close().await;
    database_url(server, &name)
}

fn is_object_in_use(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .and_then(|d| d.code())
        .is_some_and(|code| code == "55006")
}

/// The name of the template holding this checkout's PostgreSQL migrations: made on first use
/// under an advisory lock (tests run as separate processes), marked a template once complete, so
/// a build that died half-way is dropped and made again.
async fn migrated_template(server: &str) -> String {
    use sha2::{Digest, Sha256};
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../migrations/postgres");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("migration entry").path())
        .collect();
    files.sort();
    let mut hash = Sha256::new();
    for file in &files {
        hash.update(file.file_name().unwrap().as_encoded_bytes());
        hash.update(std::fs::read(file).expect("read migration"));
    }
    let name = format!("huddle_template_{}", &hex::encode(hash.finalize())[..16]);
    let mut conn = connect(server).await;
    if template_state(&mut conn, &name).await == Some(true) {
        let _ = conn.close().await;
        return name;
    }
    let key = i64::from_str_radix(&name["huddle_template_".len()..][..15], 16).unwrap();
    sqlx::query("select pg_advisory_lock($1)")
        .bind(key)
        .execute(&mut conn)
        .await
        .expect("taking the template lock");
    match template_state(&mut conn, &name).await {
        Some(true) => {}
        found => {
            if found.is_some() {
                sqlx::query(&format!("drop database {name} with (force)"))
                    .execute(&mut conn)
                    .await
                    .expect("dropping a half-made template");
            }
            sqlx::query(&format!("create database {name}"))
                .execute(&mut conn)
                .await
                .expect("creating the template");
            migrate(&database_url(server, &name)).await;
            // The migration's pool may still be closing its connections; none may stay.
            sqlx::query(
                "select pg_terminate_backend(pid) from pg_stat_activity \
                 where datname = $1 and pid <> pg_backend_pid()",
            )
            .bind(&name)
            .execute(&mut conn)
            .await
            .expect("closing the template's connections");
            sqlx::query(&format!("alter database {name} is_template true"))
                .execute(&mut conn)
                .await
                .expect("marking the template");
        }
    }
    let _ = sqlx::query("select pg_advisory_unlock($1)")
        .bind(key)
        .execute(&mut conn)
        .await;
    let _ = conn.close().await;
    name
}

/// Whether database `name` exists (`Some`) and is marked a template (`Some(true)`).
async fn template_state(conn: &mut sqlx::PgConnection, name: &str) -> Option<bool> {
    sqlx::query_scalar("select datistemplate from pg_database where datname = $1")
        .bind(name)
        .fetch_optional(conn)
        .await
        .expect("reading pg_database")
}

/// The daemon's own migrations, as `huddled migrate` applies them.
async fn migrate(url: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut settings = crate::test_settings(dir.path());
    settings.storage.backend = huddle_daemon::config::Backend::Postgres;
    settings.storage.database_url = url.to_string();
    huddle_daemon::store::open::migrate(&settings)
        .await
        .unwrap_or_else(|e| panic!("migrating the template database {url}: {e}"));
}
