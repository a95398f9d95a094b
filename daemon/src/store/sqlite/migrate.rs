//! Numbered migrations from `migrations/sqlite/`, applied once each at start-up (or only
//! checked, with `--no-migrate`), under the policy in `store::schema`.

use super::super::error::StoreResult;
use super::super::schema::{self, SchemaState, COMPAT_TABLE};
use rusqlite::{Connection, OptionalExtension};

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
    (
        5,
        include_str!("../../../../migrations/sqlite/0005_webhooks.sql"),
    ),
    (
        6,
        include_str!("../../../../migrations/sqlite/0006_team_usage.sql"),
    ),
    (
        7,
        include_str!("../../../../migrations/sqlite/0007_test_run_tier.sql"),
    ),
    (
        8,
        include_str!("../../../../migrations/sqlite/0008_task_usage_per_write.sql"),
    ),
    (
        9,
        include_str!("../../../../migrations/sqlite/0009_team_questions.sql"),
    ),
    (
        10,
        include_str!("../../../../migrations/sqlite/0010_message_filters.sql"),
    ),
    (
        11,
        include_str!("../../../../migrations/sqlite/0011_search_per_team.sql"),
    ),
    (
        12,
        include_str!("../../../../migrations/sqlite/0012_test_run_task.sql"),
    ),
    (
        13,
        include_str!("../../../../migrations/sqlite/0013_spend.sql"),
    ),
    (
        14,
        include_str!("../../../../migrations/sqlite/0014_task_usage_in_writer.sql"),
    ),
    (
        15,
        include_str!("../../../../migrations/sqlite/0015_team_seqs.sql"),
    ),
    (
        16,
        include_str!("../../../../migrations/sqlite/0016_task_events_packed.sql"),
    ),
];

/// Applies this binary's missing migrations when `migrate`, then judges the schema: an older
/// one is refused, a newer expand-only one is served.
pub fn apply(conn: &mut Connection, migrate: bool) -> StoreResult<SchemaState> {
    conn.execute_batch("create table if not exists schema_migrations (version integer primary key, applied_at integer not null)")?;
    if migrate {
        let applied = applied(conn)?;
        for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| !applied.contains(v)) {
            let tx = conn.transaction()?;
            tx.execute_batch(sql)?;
            tx.execute(
                "insert into schema_migrations (version, applied_at) values (?1, ?2)",
                (version, chrono::Utc::now().timestamp_millis()),
            )?;
            tx.commit()?;
            tracing::info!(version, "applied migration");
        }
    }
    let known: Vec<i64> = MIGRATIONS.iter().map(|(v, _)| *v).collect();
    schema::judge(&applied(conn)?, &known, compatible_from(conn)?)
}

fn applied(conn: &Connection) -> StoreResult<Vec<i64>> {
    let mut stmt = conn.prepare("select version from schema_migrations order by version")?;
    let versions = stmt
        .query_map([], |r| r.get(0))?
        .collect::<Result<Vec<i64>, _>>()?;
    Ok(versions)
}

/// The contract marker a newer release may have written (`store::schema`).
fn compatible_from(conn: &Connection) -> StoreResult<Option<i64>> {
    let exists: Option<i64> = conn
        .query_row(
            "select 1 from sqlite_master where type = 'table' and name = ?1",
            [COMPAT_TABLE],
            |r| r.get(0),
        )
        .optional()?;
    if exists.is_none() {
        return Ok(None);
    }
    Ok(conn.query_row(
        &format!("select max(compatible_from) from {COMPAT_TABLE}"),
        [],
        |r| r.get(0),
    )?)
}

#[cfg(test)]
mod tests {
    use super::MIGRATIONS;
    use rusqlite::Connection;

    fn seqs(conn: &Connection, team: i64) -> Option<(i64, i64)> {
        use rusqlite::OptionalExtension;
        conn.query_row(
            "select msg_seq, event_seq from team_seqs where team_id = ?1",
            [team],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .unwrap()
    }

    /// Migration 15 carries each team's sequences over, and its triggers keep a row per team.
    #[test]
    fn the_sequences_move_to_team_seqs_with_their_values() {
        let conn = Connection::open_in_memory().unwrap();
        for (_, sql) in MIGRATIONS.iter().filter(|(v, _)| *v < 15) {
            conn.execute_batch(sql).unwrap();
        }
        conn.execute(
            "insert into teams (name, created_at, msg_seq, event_seq) values ('qa', 0, 5, 7)",
            [],
        )
        .unwrap();
        let (_, sql) = MIGRATIONS.iter().find(|(v, _)| *v == 15).unwrap();
        conn.execute_batch(sql).unwrap();
        assert_eq!(seqs(&conn, 1), Some((5, 7)));
        // A new team (an import's too) starts from its row's values; a deleted one leaves none.
        conn.execute(
            "insert into teams (name, created_at, msg_seq, event_seq) values ('moved', 0, 3, 4)",
            [],
        )
        .unwrap();
        assert_eq!(seqs(&conn, 2), Some((3, 4)));
        conn.execute("delete from teams where id = 1", []).unwrap();
        assert_eq!(seqs(&conn, 1), None);
        assert_eq!(seqs(&conn, 2), Some((3, 4)));
    }
}
