//! An import on SQLite: the records a chunk per writer job under a hidden team name, then the
//! checks that bind them together and the real name in one last job ([`import`]); all or
//! nothing, as a refused import's rows are purged. Other teams' writes take their turns
//! between the chunks. The statements come from `store::transfer::sql`, the values from
//! `store::transfer::rows`.

use super::super::error::{StoreError, StoreResult};
use super::super::team_admin::{
    check_import, check_record, duplicate_team, import_error, records_cut_short, ImportRecords,
    AFTER_IMPORT_CHECKS, RECOUNT_BLOCKERS,
};
use super::super::transfer::rows::Cell;
use super::super::transfer::sql::{insert, insert_children, Dialect};
use super::super::transfer::tables::TEAMS;
use super::super::transfer::{Record, TeamRecord};
use super::team_purge;
use super::writer::{WriteCtx, Writer};
use huddle_wire::Team;
use rusqlite::types::{ToSqlOutput, Value};
use rusqlite::{params, params_from_iter, Connection, OptionalExtension, ToSql};

impl ToSql for Cell<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        match self {
            Cell::Int(v) => v.to_sql(),
            Cell::Text(v) => v.to_sql(),
        }
    }
}

/// Records written per writer job.
const IMPORT_CHUNK: usize = 200;

/// Imports the team: its row under a hidden name first, then the records a chunk per writer
/// job (other teams' writes take their turns between), then — in one last job — its agents,
/// the checks that bind the records together, and its real name. Agents wait for that last job
/// so that no imported token works before the team is whole. Anything refused purges what was
/// written, as a deletion does.
pub async fn import(
    writer: &Writer,
    team: TeamRecord,
    mut records: ImportRecords,
) -> StoreResult<Team> {
    let imported = check_import(&team)?;
    let name = imported.name.clone();
    let id = writer.write(move |ctx| begin(ctx, team)).await?;
    let written = async {
        let mut agents = Vec::new();
        let mut ended = false;
        loop {
            let mut chunk = Vec::with_capacity(IMPORT_CHUNK);
            while chunk.len() < IMPORT_CHUNK {
                let Some((line, record)) = records.recv().await else {
                    break;
                };
                ended |= matches!(record, Record::End(_));
                check_record(line, &record)?;
                match record {
                    Record::Agent(_) => agents.push((line, record)),
                    record => chunk.push((line, record)),
                }
            }
            if chunk.is_empty() {
                break;
            }
            writer
                .write_team(id, move |ctx| insert_records(ctx.conn, id, &chunk))
                .await?;
        }
        if !ended {
            return Err(records_cut_short());
        }
        writer
            .write_team(id, move |ctx| finish(ctx, id, &name, &agents))
            .await
    }
    .await;
    if let Err(e) = written {
        if let Err(purge) = team_purge::purge(writer, id).await {
            tracing::warn!(error = %purge, "could not remove a refused import's rows; the next start will");
        }
        return Err(e);
    }
    Ok(imported)
}

/// The team's row under a hidden name (`~importing-…`, which no API name matches); a taken
/// real name is refused here already, before any record is written.
fn begin(ctx: &mut WriteCtx<'_>, mut team: TeamRecord) -> StoreResult<i64> {
    let taken: Option<i64> = ctx
        .conn
        .prepare_cached("select id from teams where name = ?1")?
        .query_row([&team.name], |r| r.get(0))
        .optional()?;
    if taken.is_some() {
        return Err(duplicate_team(&team.name));
    }
    team.name = format!("~importing-{}", uuid::Uuid::new_v4());
    let head = Record::Team(team);
    let values = head.cells().into_iter().map(|(_, cell)| cell);
    Ok(ctx
        .conn
        .prepare_cached(&insert(&TEAMS, Dialect::Sqlite))?
        .query_row(params_from_iter(values), |r| r.get(0))?)
}

fn insert_records(conn: &Connection, id: i64, chunk: &[(usize, Record)]) -> StoreResult<()> {
    for (line, record) in chunk {
        insert_record(conn, id, record).map_err(|e| match e {
            StoreError::Internal(message) => import_error(*line, record.kind(), &message),
            other => other,
        })?;
    }
    Ok(())
}

/// The agents, the counts and checks over the whole team, then its real name.
fn finish(
    ctx: &mut WriteCtx<'_>,
    id: i64,
    name: &str,
    agents: &[(usize, Record)],
) -> StoreResult<()> {
    insert_records(ctx.conn, id, agents)?;
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
    let renamed = ctx
        .conn
        .prepare_cached(
            "update teams set name = ?2 where id = ?1 \
             and not exists (select 1 from teams where name = ?2)",
        )?
        .execute(params![id, name])?;
    if renamed == 0 {
        return Err(duplicate_team(name));
    }
    Ok(())
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
