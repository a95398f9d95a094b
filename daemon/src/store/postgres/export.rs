//! A team's records from one repeatable-read, read-only transaction (a consistent snapshot
//! while every replica keeps writing), each query's rows streamed from the server and handed
//! over as the receiver takes them. The statements come from `store::transfer::sql` (text
//! ordered byte-wise, `collate "C"`, as SQLite orders it, so both backends write the same file
//! for the same team), the records from `store::transfer::rows`.

use super::super::error::{StoreError, StoreResult};
use super::super::transfer::rows::{read, StoredRow};
use super::super::transfer::sql::{select, Dialect};
use super::super::transfer::tables::EXPORTED;
use super::super::transfer::{EndRecord, Record};
use super::db::Pool;
use futures::TryStreamExt;
use sqlx::postgres::PgRow;
use sqlx::Row;
use tokio::sync::mpsc;

impl StoredRow for PgRow {
    fn opt_int(&self, column: &str) -> StoreResult<Option<i64>> {
        Ok(self.try_get(column)?)
    }

    fn opt_text(&self, column: &str) -> StoreResult<Option<String>> {
        Ok(self.try_get(column)?)
    }
}

pub async fn export(
    pool: &Pool,
    team_id: i64,
    out: &mpsc::Sender<StoreResult<Record>>,
) -> StoreResult<()> {
    let mut tx = pool.begin().await?;
    sqlx::query("set transaction isolation level repeatable read, read only")
        .execute(tx.db())
        .await?;
    let mut sent = 0u64;
    for table in EXPORTED {
        let sql = select(table, Dialect::Postgres);
        let mut rows = sqlx::query(&sql).bind(team_id).fetch(tx.db());
        while let Some(row) = rows.try_next().await? {
            if out.send(Ok(read(table, &row)?)).await.is_err() {
                return Ok(()); // the client left
            }
            sent += 1;
        }
        if sent == 0 {
            return Err(StoreError::not_found(format!("team {team_id}")));
        }
    }
    let _ = out.send(Ok(Record::End(EndRecord { records: sent }))).await;
    tx.commit().await?;
    Ok(())
}
