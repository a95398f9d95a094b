//! Numbered migrations from `migrations/sqlite/`, applied once each at start-up.

use super::super::StoreResult;
use rusqlite::Connection;

const MIGRATIONS: &[(i64, &str)] = &[
    (
        1,
        include_str!("../../../../migrations/sqlite/0001_init.sql"),
    ),
    (
        2,
        include_str!("../../../../migrations/sqlite/0002_revocation.sql"),
    ),
    (
        3,
        include_str!("../../../../migrations/sqlite/0003_test_history.sql"),
    ),
    (
        4,
        include_str!("../../../../migrations/sqlite/0004_message_search.sql"),
    ),
];

pub fn apply(conn: &mut Connection) -> StoreResult<()> {
    conn.execute_batch("create table if not exists schema_migrations (version integer primary key, applied_at integer not null)")?;
    let current: i64 = conn.query_row(
        "select coalesce(max(version), 0) from schema_migrations",
        [],
        |r| r.get(0),
    )?;
    for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > current) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.execute(
            "insert into schema_migrations (version, applied_at) values (?1, ?2)",
            (version, chrono::Utc::now().timestamp_millis()),
        )?;
        tx.commit()?;
        tracing::info!(version, "applied migration");
    }
    Ok(())
}
