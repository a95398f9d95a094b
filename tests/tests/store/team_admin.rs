//! A whole team at once, on every backend: deleting it leaves no row of it in any table that
//! has a team column (found from the schema, so a new table is covered the day it is added)
//! and spares the other teams; an export imported elsewhere exports the same bytes, SQLite →
//! SQLite, SQLite → PostgreSQL and back; an import that contradicts itself writes nothing; on
//! PostgreSQL a team deleted by hand still takes its usage counters with it.

use huddle_daemon::hub::Hub;
use huddle_daemon::store::team_admin::{SQLITE_TEAM_TABLES, TEAM_TABLES};
use huddle_daemon::store::transfer::Record;
use huddle_daemon::store::{MessageFilter, Store, StoreError, StoreResult};
use huddle_sdk::wire::Team;
use huddle_tests::store::{postgres_on, prefixes, sqlite, Keep};
use std::sync::Arc;

use super::team_populate::populate;

/// Where a store's rows can be read directly, to look past the trait.
enum Raw {
    Sqlite(std::path::PathBuf),
    Postgres(sqlx::PgPool),
}

impl Raw {
    /// Every table with a `team_id` column.
    async fn team_tables(&self) -> Vec<String> {
        match self {
            Raw::Sqlite(path) => {
                let conn = rusqlite::Connection::open(path).unwrap();
                let tables: Vec<String> = conn
                    .prepare("select name from sqlite_master where type = 'table'")
                    .unwrap()
                    .query_map([], |r| r.get(0))
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap();
                tables
                    .into_iter()
                    .filter(|t| {
                        conn.prepare(&format!("select * from pragma_table_info('{t}')"))
                            .unwrap()
                            .query_map([], |r| r.get::<_, String>(1))
                            .unwrap()
                            .any(|c| c.unwrap() == "team_id")
                    })
                    .collect()
            }
            Raw::Postgres(pool) => sqlx::query_scalar(
                "select table_name::text from information_schema.columns
                 where column_name = 'team_id' and table_schema = current_schema()",
            )
            .fetch_all(pool)
            .await
            .unwrap(),
        }
    }

    async fn count(&self, sql: &str, team_id: i64) -> i64 {
        match self {
            Raw::Sqlite(path) => rusqlite::Connection::open(path)
                .unwrap()
                .query_row(&sql.replace("$1", "?1"), [team_id], |r| r.get(0))
                .unwrap(),
            Raw::Postgres(pool) => sqlx::query_scalar(sql)
                .bind(team_id)
                .fetch_one(pool)
                .await
                .unwrap(),
        }
    }

    /// The team's rows in each table (`teams` by id, outcomes through their runs, and on
    /// SQLite the search index's rows, a rowid range per team).
    async fn rows_of(&self, team_id: i64) -> Vec<(String, i64)> {
        let mut tables = self.team_tables().await;
        tables.extend(["teams".to_string(), "test_outcomes".to_string()]);
        let mut counts = Vec::new();
        for table in tables {
            let sql = match table.as_str() {
                "teams" => "select count(*) from teams where id = $1".to_string(),
                "test_outcomes" => "select count(*) from test_outcomes o where not exists \
                                    (select 1 from test_runs r where r.id = o.run_id) \
                                    or o.run_id in (select id from test_runs where team_id = $1)"
                    .to_string(),
                t => format!("select count(*) from {t} where team_id = $1"),
            };
            counts.push((table.clone(), self.count(&sql, team_id).await));
        }
        if let Raw::Sqlite(_) = self {
            let range = "select count(*) from messages_fts where rowid >= $1 * 1099511627776 \
                         and rowid < ($1 + 1) * 1099511627776";
            counts.push(("messages_fts".into(), self.count(range, team_id).await));
        }
        counts
    }
}

/// Each backend's store with direct access to its rows.
async fn stores() -> Vec<(Arc<dyn Store>, Keep, Raw)> {
    let (store, keep) = sqlite().await;
    let dir = keep
        .as_ref()
        .and_then(|k| k.downcast_ref::<tempfile::TempDir>());
    let path = dir
        .expect("the SQLite store's directory")
        .path()
        .join("huddle.db");
    let mut all = vec![(store, keep, Raw::Sqlite(path))];
    if std::env::var("HUDDLE_TEST_STORE").as_deref() != Ok("sqlite") {
        let url = huddle_tests::pg::fresh_database().await;
        let (store, keep) = postgres_on(&url, Arc::new(Hub::new(64))).await;
        all.push((
            store,
            keep,
            Raw::Postgres(sqlx::PgPool::connect(&url).await.unwrap()),
        ));
    }
    all
}

#[tokio::test]
async fn deleting_a_team_leaves_no_row_of_it_in_any_table_and_spares_the_others() {
    for (store, _keep, raw) in stores().await {
        let qa = populate(&*store, "qa").await;
        let dev = populate(&*store, "dev").await;
        let tables = raw.team_tables().await;
        for table in &tables {
            let sqlite_only =
                matches!(raw, Raw::Sqlite(_)) && SQLITE_TEAM_TABLES.contains(&table.as_str());
            assert!(
                TEAM_TABLES.contains(&table.as_str()) || sqlite_only,
                "{table} has a team column but team deletion does not empty it"
            );
        }
        // The test means something only if the team has rows everywhere.
        for (table, n) in raw.rows_of(qa).await {
            assert!(n > 0, "the populated team has no row in {table}");
        }
        let before_dev = raw.rows_of(dev).await;
        store.delete_team(qa).await.unwrap();
        for (table, n) in raw.rows_of(qa).await {
            assert_eq!(n, 0, "{table} keeps {n} rows of the deleted team");
        }
        assert_eq!(raw.rows_of(dev).await, before_dev, "the other team's rows");
        assert!(matches!(
            store.team_id("qa").await,
            Err(StoreError::NotFound { .. })
        ));
        assert!(store
            .authenticate("hash-qa-tester")
            .await
            .unwrap()
            .is_none());
        assert!(store
            .authenticate("hash-dev-tester")
            .await
            .unwrap()
            .is_some());
        assert!(matches!(
            store.delete_team(qa).await,
            Err(StoreError::NotFound { .. })
        ));
        // The name is free again, and the new team starts empty.
        store.create_team("qa").await.unwrap();
        let again = store.team_id("qa").await.unwrap();
        let messages = store
            .list_messages(
                again,
                MessageFilter {
                    limit: 10,
                    ..Default::default()
                },
            )
            .await
            .unwrap()
            .items;
        assert!(messages.is_empty());
    }
}

/// On PostgreSQL the usage counters have no foreign key to their team (migration 0017): a
/// team deleted by hand, not through huddle, still takes its counter rows with it.
#[tokio::test]
async fn a_team_deleted_by_hand_on_postgres_takes_its_usage_counters_with_it() {
    for (store, _keep, raw) in stores().await {
        let Raw::Postgres(pool) = &raw else { continue };
        store.create_team("gone").await.unwrap();
        store.create_team("kept").await.unwrap();
        let gone = store.team_id("gone").await.unwrap();
        let kept = store.team_id("kept").await.unwrap();
        let usage = "select count(*) from team_usage where team_id = $1";
        assert!(
            raw.count(usage, gone).await > 0,
            "a new team has its counters"
        );
        sqlx::query("delete from teams where id = $1")
            .bind(gone)
            .execute(pool)
            .await
            .unwrap();
        assert_eq!(
            raw.count(usage, gone).await,
            0,
            "the deleted team's counters"
        );
        assert!(
            raw.count(usage, kept).await > 0,
            "the other team's counters"
        );
    }
}

/// The export of `team` as one string (the records as the store gives them).
async fn export_text(store: &dyn Store, team: &str) -> String {
    let id = store.team_id(team).await.unwrap();
    let mut records = store.export_team(id).await.unwrap();
    let mut text = String::new();
    while let Some(record) = records.recv().await {
        text.push_str(&record.unwrap().to_line().unwrap());
    }
    text
}

/// Imports an export's text under `name`, as the HTTP layer would feed it.
async fn import_text(store: &dyn Store, name: &str, text: &str) -> StoreResult<Team> {
    let mut lines = text
        .lines()
        .map(|l| Record::parse(l).unwrap_or_else(|e| panic!("{e}: {l}")));
    let Some(Record::Team(mut head)) = lines.next() else {
        panic!("an export starts with its team")
    };
    head.name = name.to_string();
    let rest: Vec<Record> = lines.collect();
    let (to, from) = tokio::sync::mpsc::channel(4);
    let feed = tokio::spawn(async move {
        for (i, record) in rest.into_iter().enumerate() {
            if to.send((i + 2, record)).await.is_err() {
                return;
            }
        }
    });
    let imported = store.import_team(head, from).await;
    feed.await.unwrap();
    imported
}

#[tokio::test]
async fn an_export_imported_elsewhere_exports_the_same_bytes_on_every_backend() {
    let mut sources = stores().await;
    let mut targets = stores().await;
    let (source, _keep, _) = sources.remove(0);
    populate(&*source, "qa").await;
    let original = export_text(&*source, "qa").await;
    let kinds: Vec<String> = original
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["kind"].to_string())
        .collect();
    for kind in [
        "team",
        "agent",
        "counter",
        "task",
        "message",
        "idempotency_key",
        "event",
    ] {
        assert!(kinds.contains(&format!("\"{kind}\"")), "no {kind} record");
    }
    for kind in ["memory_change", "test_run", "webhook", "settings", "end"] {
        assert!(kinds.contains(&format!("\"{kind}\"")), "no {kind} record");
    }
    // The task in progress travels as pending, without its lease; its attempt is kept.
    let first = original
        .lines()
        .find(|l| l.contains(r#""kind":"task","version":1,"id":"TEST-001""#))
        .expect("TEST-001's record");
    assert!(first.contains(r#""status":"pending""#), "{first}");
    assert!(
        first.contains(r#""claimedBy":null,"attempts":1"#),
        "{first}"
    );
    assert!(!first.contains("lease"), "{first}");
    let run = original
        .lines()
        .find(|l| l.contains(r#""kind":"test_run""#))
        .expect("the test run's record");
    assert!(
        run.contains(r#""tier":"unit""#),
        "the run's tier travels: {run}"
    );
    let source_id = source.team_id("qa").await.unwrap();
    let (_, source_usage) = source.team_settings(source_id).await.unwrap();
    // SQLite → SQLite, SQLite → PostgreSQL, and PostgreSQL → SQLite again.
    let mut text = original.clone();
    for (target, _keep, _) in targets.drain(..).rev().chain(sources.drain(..)) {
        import_text(&*target, "qa", &text).await.unwrap();
        let again = export_text(&*target, "qa").await;
        assert_eq!(
            again,
            original,
            "the export after an import ({})",
            target.describe()
        );
        text = again;
        // The imported tasks are counted into the team's usage, once.
        let imported_id = target.team_id("qa").await.unwrap();
        let (_, usage) = target.team_settings(imported_id).await.unwrap();
        assert_eq!(usage, source_usage, "{}", target.describe());
        // Tokens keep working; the task in progress is claimable again, attempts kept.
        let tester = target
            .authenticate("hash-qa-tester")
            .await
            .unwrap()
            .expect("the tester's token works after the import");
        assert_eq!(tester.team, "qa");
        let claimed = target
            .claim_task(&tester, prefixes("TEST"), 60_000)
            .await
            .unwrap()
            .expect("TEST-001 is claimable");
        assert_eq!((claimed.id.as_str(), claimed.attempts), ("TEST-001", 1));
        // The admin's overrides came along: the moved team keeps its quota.
        let (settings, _) = target.team_settings(tester.team_id).await.unwrap();
        assert_eq!(
            settings.quotas.max_tasks,
            Some(10_000),
            "{}",
            target.describe()
        );
        let blocked = target.get_task(tester.team_id, "TEST-002").await.unwrap();
        assert_eq!(blocked.blocked_by, vec!["TEST-001".to_string()]);
        // The same daemon holds those tokens now: a copy under another name is refused whole.
        let copy = import_text(&*target, "qa-copy", &original).await;
        assert!(matches!(copy, Err(StoreError::Conflict { .. })), "{copy:?}");
        assert!(target.team_id("qa-copy").await.is_err());
        let again = import_text(&*target, "qa", &original).await;
        assert!(
            matches!(again, Err(StoreError::Conflict { .. })),
            "{again:?}"
        );
    }
}

#[tokio::test]
async fn an_import_that_contradicts_itself_writes_nothing() {
    for (store, _keep, _) in stores().await {
        populate(&*store, "qa").await;
        let original = export_text(&*store, "qa").await;
        store
            .delete_team(store.team_id("qa").await.unwrap())
            .await
            .unwrap();
        // A blocker the file does not hold.
        let missing =
            original.replace(r#""blockedBy":["TEST-001"]"#, r#""blockedBy":["TEST-009"]"#);
        let err = import_text(&*store, "qa", &missing).await.unwrap_err();
        assert!(err.to_string().contains("TEST-009"), "{err}");
        // A task twice: the second line is named.
        let lines: Vec<&str> = original.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.contains(r#""kind":"task""#))
            .unwrap();
        let mut twice = lines.clone();
        twice.insert(at + 1, lines[at]);
        let end = twice.len() - 1;
        let count = format!(r#""records":{}"#, end);
        let fixed_end = twice[end].replace(&format!(r#""records":{}"#, end - 1), &count);
        twice[end] = &fixed_end;
        let err = import_text(&*store, "qa", &twice.join("\n"))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, StoreError::Invalid { field, .. } if field == &format!("line {}", at + 2)),
            "{err:?}"
        );
        assert!(store.team_id("qa").await.is_err(), "nothing was kept");
        // A negative quota in the settings: refused, its line named, nothing kept.
        let negative = original.replace(r#""maxTasks":10000"#, r#""maxTasks":-1"#);
        assert_ne!(negative, original, "the export holds the settings");
        let settings_line = original
            .lines()
            .position(|l| l.contains(r#""kind":"settings""#))
            .unwrap();
        let err = import_text(&*store, "qa", &negative).await.unwrap_err();
        assert!(
            matches!(&err, StoreError::Invalid { field, message, .. }
                if field == &format!("line {}", settings_line + 1) && message.contains("negative")),
            "{err:?}"
        );
        assert!(store.team_id("qa").await.is_err(), "nothing was kept");
        // The file itself still imports.
        import_text(&*store, "qa", &original).await.unwrap();
    }
}
