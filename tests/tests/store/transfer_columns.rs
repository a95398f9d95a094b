//! Each exported table's one column list (`store::transfer::tables`) against the migrated
//! schema of both backends: every column of a team's table is exported or left out on purpose,
//! every listed column exists, and every team table is exported or named as not exported. A
//! column a migration adds fails here until the lists say what an export does with it.

use huddle_daemon::store::team_admin::TEAM_TABLES;
use huddle_daemon::store::transfer::tables::{Children, Table, EXPORTED, NOT_EXPORTED};
use std::collections::BTreeSet;

/// A migrated database, read through its catalog.
enum Schema {
    Sqlite(rusqlite::Connection),
    Postgres(sqlx::PgPool),
}

impl Schema {
    fn name(&self) -> &'static str {
        match self {
            Schema::Sqlite(_) => "SQLite",
            Schema::Postgres(_) => "PostgreSQL",
        }
    }

    /// The table's columns, generated ones included.
    async fn columns(&self, table: &str) -> BTreeSet<String> {
        match self {
            Schema::Sqlite(conn) => conn
                .prepare("select name from pragma_table_xinfo(?1)")
                .unwrap()
                .query_map([table], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap(),
            Schema::Postgres(pool) => sqlx::query_scalar(
                "select column_name::text from information_schema.columns
                 where table_schema = current_schema() and table_name = $1",
            )
            .bind(table)
            .fetch_all(pool)
            .await
            .unwrap()
            .into_iter()
            .collect(),
        }
    }
}

/// A SQLite file and (unless `HUDDLE_TEST_STORE=sqlite`) a PostgreSQL database, both migrated
/// by this build.
async fn schemas() -> (Vec<Schema>, Option<tempfile::TempDir>) {
    let (store, keep) = huddle_tests::store::sqlite().await;
    store.close().await;
    let dir = *keep
        .expect("the SQLite store's directory")
        .downcast::<tempfile::TempDir>()
        .unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("huddle.db")).unwrap();
    let mut all = vec![Schema::Sqlite(conn)];
    if std::env::var("HUDDLE_TEST_STORE").as_deref() != Ok("sqlite") {
        let url = huddle_tests::pg::fresh_database().await;
        all.push(Schema::Postgres(sqlx::PgPool::connect(&url).await.unwrap()));
    }
    (all, Some(dir))
}

fn names<'a>(names: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
    names.into_iter().map(str::to_string).collect()
}

/// The columns the lists give `table`: its team column and exported columns, and of those
/// left out, the ones this backend has.
fn listed(table: &Table, actual: &BTreeSet<String>) -> (BTreeSet<String>, BTreeSet<String>) {
    let exported = names(
        [table.team]
            .into_iter()
            .chain(table.columns.iter().copied()),
    );
    let left_out = names(
        table
            .left_out
            .iter()
            .copied()
            .filter(|c| actual.contains(*c)),
    );
    (exported, left_out)
}

fn children_listed(children: &Children) -> BTreeSet<String> {
    let keys = children.keys.iter().map(|(child, _)| *child);
    names(keys.chain(children.columns.iter().map(|c| c.name())))
}

#[tokio::test]
async fn every_column_of_a_teams_tables_is_exported_or_left_out_on_purpose() {
    let (schemas, _dir) = schemas().await;
    let mut left_out_found = BTreeSet::new();
    for schema in &schemas {
        let backend = schema.name();
        for table in EXPORTED {
            let actual = schema.columns(table.name).await;
            assert!(!actual.is_empty(), "{backend} has no table {}", table.name);
            let (exported, left_out) = listed(table, &actual);
            let missing: Vec<_> = exported.difference(&actual).collect();
            assert!(
                missing.is_empty(),
                "{backend}: {} has no column {missing:?}, which it exports",
                table.name
            );
            for column in actual.difference(&exported) {
                assert!(
                    left_out.contains(column),
                    "{backend}: {}.{column} is neither exported nor left out \
                     (daemon/src/store/transfer/tables.rs)",
                    table.name
                );
            }
            left_out_found.extend(left_out.iter().map(|c| format!("{}.{c}", table.name)));
            if let Some(children) = table.children {
                assert_eq!(
                    schema.columns(children.name).await,
                    children_listed(children),
                    "{backend}: the columns of {}, {}'s children",
                    children.name,
                    table.name
                );
            }
        }
        for name in TEAM_TABLES {
            let exported = EXPORTED
                .iter()
                .any(|t| t.name == name || t.children.is_some_and(|c| c.name == name));
            let not = NOT_EXPORTED.iter().any(|(t, _)| *t == name);
            assert!(
                exported != not,
                "{name}: a team's table is either exported or named in NOT_EXPORTED, once"
            );
        }
    }
    if schemas.len() > 1 {
        for table in EXPORTED {
            for column in table.left_out {
                let name = format!("{}.{column}", table.name);
                assert!(
                    left_out_found.contains(&name),
                    "{name} is left out but no backend has it"
                );
            }
        }
    }
}
