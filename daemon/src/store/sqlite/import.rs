//! An import on SQLite: one writer job (so all or nothing, in its own savepoint) inserting
//! the records as the spooled file is read, then the checks that bind them together.
//! The writer takes no other job meanwhile: a large import is best run in a quiet moment.
//! The statements come from `store::transfer::sql`, the values from `store::transfer::rows`.

use super::super::error::{StoreError, StoreResult};
use super::super::team_admin::{
    check_import, check_record, duplicate_team, import_error, records_cut_short, ImportRecords,
    AFTER_IMPORT_CHECKS, RECOUNT_BLOCKERS,
};
use super::super::transfer::rows::Cell;
use super::super::transfer::sql::{insert, insert_children, Dialect};
use super::super::transfer::tables::TEAMS;
use super::super::transfer::{Record, TeamRecord};
use super::writer::WriteCtx;
use huddle_wire::Team;
use rusqlite::types::{ToSqlOutput, Value};
use rusqlite::{params_from_iter, Connection, OptionalExtension, ToSql};

impl ToSql for Cell<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        match self {
            Cell::Int(v) => v.to_sql(),
            Cell::Text(v) => v.to_sql(),
        }
    }
}

pub fn import(
    ctx: &mut WriteCtx<'_>,
    team: TeamRecord,
    mut records: ImportRecords,
) -> StoreResult<Team> {
    let imported = check_import(&team)?;
    let head = Record::Team(team);
    let values = head.cells().into_iter().map(|(_, cell)| cell);
    let id: Option<i64> = ctx
        .conn
        .prepare_cached(&insert(&TEAMS, Dialect::Sqlite))?
        .query_row(params_from_iter(values), |r| r.get(0))
        .optional()?;
    let Some(id) = id else {
        return Err(duplicate_team(&imported.name));
    };
    let mut ended = false;
    while let Some((line, record)) = records.blocking_recv() {
        ended |= matches!(record, Record::End(_));
        check_record(line, &record)?;
        insert_record(ctx.conn, id, &record).map_err(|e| match e {
            StoreError::Internal(message) => import_error(line, record.kind(), &message),
            other => other,
        })?;
    }
    if !ended {
        return Err(records_cut_short());
    }
    ctx.conn.prepare_cached(RECOUNT_BLOCKERS)?.execute([id])?;
    super::usage::count_imported_tasks(ctx.conn, id)?;
    for (sql, field) in AFTER_IMPORT_CHECKS {
        let problem: Option<String> = ctx
            .conn
            .prepare_cached(&format!("{sql} limit 1"))?
            .query_row([id], |r| r.get(0))
            .optional()?;
        if let Some(problem) = problem {
            return Err(StoreError::invalid(field, problem));
        }
    }
    Ok(imported)
}

/// One record's row, then its children's rows under the keys the row's insert answered.
fn insert_record(conn: &Connection, team: i64, record: &Record) -> StoreResult<()> {
    let table = match record.table() {
        Some(table) if !matches!(record, Record::Team(_)) => table,
        _ => return Ok(()),
    };
    let cells = record.cells();
    let values = std::iter::once(Cell::Int(Some(team))).chain(cells.iter().map(|(_, c)| *c));
    let mut statement = conn.prepare_cached(&insert(table, Dialect::Sqlite))?;
    let (Some(children), Some(rows)) = (table.children, record.children_json()) else {
        statement.execute(params_from_iter(values))?;
        return Ok(());
    };
    let mut keys: Vec<Value> = statement.query_row(params_from_iter(values), |r| {
        (0..children.keys.len()).map(|i| r.get(i)).collect()
    })?;
    keys.push(Value::Text(rows));
    conn.prepare_cached(&insert_children(children))?
        .execute(params_from_iter(keys))?;
    Ok(())
}
