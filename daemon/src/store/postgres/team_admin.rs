//! A whole team on PostgreSQL (`store::team_admin`). Deletion locks the team's row first (the
//! team's writes on every replica finish before it, and those queued behind it find no team),
//! empties every table in one transaction and announces the deletion on [`TEAM_DELETED`], so
//! every replica drops the team's tokens and ends its streams. An import is one transaction
//! (`import.rs`).

use super::super::error::{StoreError, StoreResult};
use super::super::team_admin::{ImportRecords, TeamAdminStore, EXPORT_BUFFER, TEAM_TABLES};
use super::super::transfer::{Record, TeamRecord};
use super::{export, import, PostgresStore};
use async_trait::async_trait;
use huddle_wire::Team;
use tokio::sync::mpsc;

/// The NOTIFY channel a deletion is announced on; the payload is the team's id.
pub const TEAM_DELETED: &str = "huddle_team_deleted";

#[async_trait]
impl TeamAdminStore for PostgresStore {
    #[tracing::instrument(skip(self))]
    async fn delete_team(&self, team_id: i64) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        // The team's rows before its row: claims and completions lock task rows and take the
        // team's row last (`tx.rs`), so this order waits for them rather than deadlocking.
        sqlx::query("select 1 from tasks where team_id = $1 order by id for update")
            .bind(team_id)
            .execute(tx.db())
            .await?;
        let found: Option<i64> =
            sqlx::query_scalar("select id from teams where id = $1 for update")
                .bind(team_id)
                .fetch_optional(tx.db())
                .await?;
        if found.is_none() {
            return Err(StoreError::not_found(format!("team {team_id}")));
        }
        for table in TEAM_TABLES {
            let sql = match table {
                "teams" => "delete from teams where id = $1".to_string(),
                // Outcomes go with their runs (`on delete cascade`); SQLite's search marks
                // have no table here.
                "test_outcomes" | "messages_fts_mark" => continue,
                other => format!("delete from {other} where team_id = $1"),
            };
            sqlx::query(&sql).bind(team_id).execute(tx.db()).await?;
        }
        sqlx::query("select pg_notify($1, $2)")
            .bind(TEAM_DELETED)
            .bind(team_id.to_string())
            .execute(tx.db())
            .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn export_team(&self, team_id: i64) -> StoreResult<mpsc::Receiver<StoreResult<Record>>> {
        let (out, records) = mpsc::channel(EXPORT_BUFFER);
        let pool = self.pool.clone();
        tokio::spawn(async move {
            if let Err(e) = export::export(&pool, team_id, &out).await {
                let _ = out.send(Err(e)).await;
            }
        });
        Ok(records)
    }

    #[tracing::instrument(skip_all, fields(team = %team.name))]
    async fn import_team(&self, team: TeamRecord, records: ImportRecords) -> StoreResult<Team> {
        import::import(&self.pool, team, records).await
    }
}
