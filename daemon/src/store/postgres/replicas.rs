//! The replicas' heartbeats (`crate::replicas`): one row per live replica, on the database's
//! clock, so replicas whose clocks disagree still agree on who is alive.

use super::super::error::StoreResult;
use super::db::Pool;
use super::DB_NOW_MS;
use std::time::Duration;

/// Marks `replica` alive, forgets marks older than `expiry`, and counts the replicas left,
/// `replica` included, in one transaction.
pub async fn heartbeat(pool: &Pool, replica: &str, expiry: Duration) -> StoreResult<usize> {
    let mut tx = pool.begin().await?;
    let expiry_ms = expiry.as_millis().min(i64::MAX as u128) as i64;
    sqlx::query(&format!(
        "insert into replicas (id, seen_at) values ($1, {DB_NOW_MS})
         on conflict (id) do update set seen_at = excluded.seen_at"
    ))
    .bind(replica)
    .execute(tx.db())
    .await?;
    sqlx::query(&format!(
        "delete from replicas where seen_at < {DB_NOW_MS} - $1"
    ))
    .bind(expiry_ms)
    .execute(tx.db())
    .await?;
    let live: i64 = sqlx::query_scalar("select count(*) from replicas")
        .fetch_one(tx.db())
        .await?;
    tx.commit().await?;
    Ok(live.max(1) as usize)
}

/// Removes `replica`'s mark (a clean shutdown), so the others count it out at once.
pub async fn left(pool: &Pool, replica: &str) -> StoreResult<()> {
    let mut tx = pool.begin().await?;
    sqlx::query("delete from replicas where id = $1")
        .bind(replica)
        .execute(tx.db())
        .await?;
    Ok(tx.commit().await?)
}
