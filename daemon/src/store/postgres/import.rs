//! An import on PostgreSQL: one transaction inserting the records as the spooled file is
//! read (a parent row and its children in one statement), then the checks that bind them
//! together. The statements come from `store::transfer::sql`, the values from
//! `store::transfer::rows`.

use super::super::error::{StoreError, StoreResult};
use super::super::team_admin::{
    check_import, check_record, duplicate_team, import_error, records_cut_short, ImportRecords,
    AFTER_IMPORT_CHECKS, RECOUNT_BLOCKERS,
};
use super::super::transfer::rows::Cell;
use super::super::transfer::sql::{insert, Dialect};
use super::super::transfer::tables::TEAMS;
use super::super::transfer::{Record, TeamRecord};
use super::db::{Pool, PoolTx};
use huddle_wire::Team;
use sqlx::postgres::{PgArguments, Postgres};
use sqlx::query::Query;
use sqlx::Row;

pub async fn import(
    pool: &Pool,
    team: TeamRecord,
    mut records: ImportRecords,
) -> StoreResult<Team> {
    let imported = check_import(&team)?;
    let mut tx = pool.begin().await?;
    let head = Record::Team(team);
    let sql = insert(&TEAMS, Dialect::Postgres);
    let row = bind(sqlx::query(&sql), &head)
        .fetch_optional(tx.db())
        .await?;
    let Some(row) = row else {
        return Err(duplicate_team(&imported.name));
    };
    let id: i64 = row.try_get(0)?;
    let mut ended = false;
    while let Some((line, record)) = records.recv().await {
        ended |= matches!(record, Record::End(_));
        check_record(line, &record)?;
        if let Err(e) = insert_record(&mut tx, id, &record).await {
            return Err(match e {
                sqlx::Error::Database(db) => import_error(line, record.kind(), db.message()),
                other => other.into(),
            });
        }
    }
    if !ended {
        return Err(records_cut_short());
    }
    sqlx::query(RECOUNT_BLOCKERS)
        .bind(id)
        .execute(tx.db())
        .await?;
    super::usage::count_imported_messages(tx.db(), id).await?;
    for (sql, field) in AFTER_IMPORT_CHECKS {
        let problem: Option<String> = sqlx::query_scalar(&format!("{sql} limit 1"))
            .bind(id)
            .fetch_optional(tx.db())
            .await?;
        if let Some(problem) = problem {
            return Err(StoreError::invalid(field, problem));
        }
    }
    tx.commit().await?;
    Ok(imported)
}

/// One record's row with its children (an unknown column value is the database's to refuse).
async fn insert_record(tx: &mut PoolTx, team: i64, record: &Record) -> Result<(), sqlx::Error> {
    let table = match record.table() {
        Some(table) if !matches!(record, Record::Team(_)) => table,
        _ => return Ok(()),
    };
    let sql = insert(table, Dialect::Postgres);
    let mut query = bind(sqlx::query(&sql).bind(team), record);
    if let Some(rows) = record.children_json() {
        query = query.bind(rows);
    }
    query.execute(tx.db()).await?;
    Ok(())
}

/// Binds the record's values in its table's column order.
fn bind<'q>(
    mut query: Query<'q, Postgres, PgArguments>,
    record: &'q Record,
) -> Query<'q, Postgres, PgArguments> {
    for (_, cell) in record.cells() {
        query = match cell {
            Cell::Int(v) => query.bind(v),
            Cell::Text(v) => query.bind(v),
        };
    }
    query
}
