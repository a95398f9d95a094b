//! A whole team on SQLite (`store::team_admin`): deletion is one writer job (every table in
//! one transaction), an export one read transaction on a pooled connection streaming its rows,
//! an import one writer job fed the records as they are read from the spooled file.

use super::super::error::{StoreError, StoreResult};
use super::super::team_admin::{ImportRecords, TeamAdminStore, EXPORT_BUFFER, TEAM_TABLES};
use super::super::transfer::{Record, TeamRecord};
use super::writer::WriteCtx;
use super::{export, import, SqliteStore};
use crate::hub::Publish;
use async_trait::async_trait;
use huddle_wire::Team;
use rusqlite::OptionalExtension;
use tokio::sync::mpsc;

#[async_trait]
impl TeamAdminStore for SqliteStore {
    #[tracing::instrument(skip(self))]
    async fn delete_team(&self, team_id: i64) -> StoreResult<()> {
        let writer = self.writer()?;
        writer
            .write_team(team_id, move |ctx| delete(ctx, team_id))
            .await?;
        // The team's per-team bookkeeping in memory (its id may be handed out again).
        writer.forget_team(team_id);
        Ok(())
    }

    async fn export_team(&self, team_id: i64) -> StoreResult<mpsc::Receiver<StoreResult<Record>>> {
        let (out, records) = mpsc::channel(EXPORT_BUFFER);
        let readers = self.readers.clone();
        tokio::spawn(async move {
            let failed = out.clone();
            let read = readers
                .read(move |conn| export::export(conn, team_id, &out))
                .await;
            if let Err(e) = read {
                let _ = failed.send(Err(e)).await;
            }
        });
        Ok(records)
    }

    #[tracing::instrument(skip_all, fields(team = %team.name))]
    async fn import_team(&self, team: TeamRecord, records: ImportRecords) -> StoreResult<Team> {
        self.writer()?
            .write(move |ctx| import::import(ctx, team, records))
            .await
    }
}

/// Deletes every row of the team; tables are emptied in [`TEAM_TABLES`]' order.
fn delete(ctx: &mut WriteCtx<'_>, team_id: i64) -> StoreResult<()> {
    let found: Option<i64> = ctx
        .conn
        .prepare_cached("select id from teams where id = ?1")?
        .query_row([team_id], |r| r.get(0))
        .optional()?;
    if found.is_none() {
        return Err(StoreError::not_found(format!("team {team_id}")));
    }
    for table in TEAM_TABLES {
        let sql = match table {
            "teams" => "delete from teams where id = ?1".to_string(),
            "test_outcomes" => "delete from test_outcomes where run_id in \
                                (select id from test_runs where team_id = ?1)"
                .to_string(),
            // The delete trigger takes each message's row out of the search index.
            other => format!("delete from {other} where team_id = ?1"),
        };
        ctx.conn.prepare_cached(&sql)?.execute([team_id])?;
    }
    ctx.forget_team(team_id);
    // Forgets the team's empty-claim marks and wakes its waiting claimers (which then end:
    // their tokens are gone).
    ctx.publish(team_id, Publish::TasksChanged);
    Ok(())
}
