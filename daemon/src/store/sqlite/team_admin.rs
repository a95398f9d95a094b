//! A whole team on SQLite (`store::team_admin`): a deletion retires the team in one short
//! writer job and purges its rows a chunk per job (`team_purge.rs`), an export is one read
//! transaction on a pooled connection streaming its rows, an import writes a chunk of records
//! per job under a hidden name and takes its real name last (`import.rs`).

use super::super::error::{StoreError, StoreResult};
use super::super::team_admin::{ImportRecords, TeamAdminStore, EXPORT_BUFFER};
use super::super::transfer::{Record, TeamRecord};
use super::{export, import, team_purge, SqliteStore};
use async_trait::async_trait;
use huddle_wire::Team;
use tokio::sync::mpsc;

#[async_trait]
impl TeamAdminStore for SqliteStore {
    #[tracing::instrument(skip(self))]
    async fn delete_team(&self, team_id: i64) -> StoreResult<()> {
        let writer = self.writer()?;
        writer
            .write_team(team_id, move |ctx| team_purge::retire(ctx, team_id))
            .await?;
        // Other teams' writes take their turns between the chunks. On a task of its own, so a
        // caller that stops waiting does not leave the purge half done.
        tokio::spawn(async move { team_purge::purge(&writer, team_id).await })
            .await
            .map_err(|e| StoreError::Internal(format!("the team purge stopped: {e}")))?
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
        let writer = self.writer()?;
        // On a task of its own, so a caller that stops waiting does not leave it half done.
        tokio::spawn(async move { import::import(&writer, team, records).await })
            .await
            .map_err(|e| StoreError::Internal(format!("the import stopped: {e}")))?
    }
}
