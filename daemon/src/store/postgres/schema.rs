//! `migrations/postgres/` under the policy in `store::schema`: sqlx applies them (tracked in
//! `_sqlx_migrations`, under an advisory lock so concurrent replicas apply each once), told to
//! ignore the rows of migrations a newer release applied, which it would otherwise refuse.

use super::super::error::{StoreError, StoreResult};
use super::super::schema::{self, SchemaState, COMPAT_TABLE};
use sqlx::migrate::Migrator;
use sqlx::PgPool;

fn migrator() -> Migrator {
    let mut m = sqlx::migrate!("../migrations/postgres");
    m.set_ignore_missing(true);
    m
}

/// Applies this binary's missing migrations when `migrate`, then judges the schema.
pub async fn prepare(pool: &PgPool, migrate: bool) -> StoreResult<SchemaState> {
    let migrator = migrator();
    if migrate {
        migrator
            .run(pool)
            .await
            .map_err(|e| StoreError::Unavailable(format!("migrating the database: {e}")))?;
    }
    let known: Vec<i64> = migrator.iter().map(|m| m.version).collect();
    schema::judge(&applied(pool).await?, &known, compatible_from(pool).await?)
}

async fn applied(pool: &PgPool) -> StoreResult<Vec<i64>> {
    let table: Option<String> = sqlx::query_scalar("select to_regclass('_sqlx_migrations')::text")
        .fetch_one(pool)
        .await?;
    if table.is_none() {
        return Ok(Vec::new());
    }
    Ok(
        sqlx::query_scalar("select version from _sqlx_migrations where success order by version")
            .fetch_all(pool)
            .await?,
    )
}

/// The contract marker a newer release may have written (`store::schema`).
async fn compatible_from(pool: &PgPool) -> StoreResult<Option<i64>> {
    let table: Option<String> = sqlx::query_scalar("select to_regclass($1)::text")
        .bind(COMPAT_TABLE)
        .fetch_one(pool)
        .await?;
    if table.is_none() {
        return Ok(None);
    }
    Ok(sqlx::query_scalar(&format!(
        "select max(compatible_from)::bigint from {COMPAT_TABLE}"
    ))
    .fetch_one(pool)
    .await?)
}
