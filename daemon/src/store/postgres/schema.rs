//! `migrations/postgres/` under the policy in `store::schema`: sqlx applies them (tracked in
//! `_sqlx_migrations`, under an advisory lock so concurrent replicas apply each once), told to
//! ignore the rows of migrations a newer release applied, which it would otherwise refuse.

use super::super::error::{StoreError, StoreResult};
use super::super::schema::{self, SchemaState, COMPAT_TABLE};
use sqlx::error::BoxDynError;
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};
use sqlx::PgPool;
use std::borrow::Cow;

/// Each file of `migrations/postgres/` with its text, in version order. Embedded by hand rather
/// than with `sqlx::migrate!`, whose proc macro builds tokio, sqlx and serde_json once more as
/// host code in every check and build; the test below keeps this list equal to the directory.
macro_rules! embedded {
    ($($file:literal,)*) => {
        &[$(($file, include_str!(concat!("../../../../migrations/postgres/", $file))),)*]
    };
}
const FILES: &[(&str, &str)] = embedded![
    "0001_init.sql",
    "0002_test_history.sql",
    "0003_message_search.sql",
    "0004_webhooks.sql",
    "0005_team_usage.sql",
    "0006_replicas.sql",
    "0007_test_run_tier.sql",
    "0008_usage_slots.sql",
    "0009_heard_until.sql",
    "0010_usage_add_plpgsql.sql",
    "0011_team_questions.sql",
    "0012_message_filters.sql",
    "0013_search_per_team.sql",
    "0014_test_run_task.sql",
    "0015_spend.sql",
    "0016_task_scopes.sql",
    "0017_usage_one_statement.sql",
    "0018_task_usage_in_daemon.sql",
    "0019_message_usage_in_daemon.sql",
];

/// The embedded files as sqlx reads a directory: `<version>_<description>.sql`, the
/// description's underscores as spaces, `-- no-transaction` first to run outside one.
#[derive(Debug)]
struct Embedded;

impl MigrationSource<'static> for Embedded {
    fn resolve(self) -> futures::future::BoxFuture<'static, Result<Vec<Migration>, BoxDynError>> {
        Box::pin(async {
            FILES
                .iter()
                .map(|(file, sql)| migration(file, sql))
                .collect()
        })
    }
}

fn migration(file: &str, sql: &'static str) -> Result<Migration, BoxDynError> {
    let (version, description) = file
        .strip_suffix(".sql")
        .and_then(|stem| stem.split_once('_'))
        .ok_or_else(|| format!("migration {file} is not named <version>_<description>.sql"))?;
    Ok(Migration::new(
        version.parse()?,
        Cow::Owned(description.replace('_', " ")),
        MigrationType::Simple,
        Cow::Borrowed(sql),
        sql.starts_with("-- no-transaction"),
    ))
}

async fn migrator() -> StoreResult<Migrator> {
    let mut m = Migrator::new(Embedded)
        .await
        .map_err(|e| StoreError::Unavailable(format!("reading the migrations: {e}")))?;
    m.set_ignore_missing(true);
    Ok(m)
}

/// Applies this binary's missing migrations when `migrate`, then judges the schema.
pub async fn prepare(pool: &PgPool, migrate: bool) -> StoreResult<SchemaState> {
    let migrator = migrator().await?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// sqlx's own reading of the directory is the reference: versions, descriptions, checksums
    /// (so a database an earlier build migrated is accepted) and the no-transaction flag.
    #[tokio::test]
    async fn the_embedded_list_is_the_directory_as_sqlx_reads_it() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../migrations/postgres");
        let from_dir = Migrator::new(dir).await.expect("sqlx reads the directory");
        let embedded = migrator().await.expect("the embedded list");
        let shape = |m: &Migrator| -> Vec<_> {
            m.iter()
                .map(|m| {
                    (
                        m.version,
                        m.description.to_string(),
                        m.checksum.to_vec(),
                        m.no_tx,
                    )
                })
                .collect()
        };
        assert_eq!(
            shape(&embedded),
            shape(&from_dir),
            "add the new migration to FILES"
        );
        assert_eq!(embedded.iter().next().map(|m| m.version), Some(1));
    }

    #[test]
    fn a_badly_named_file_is_an_error() {
        assert!(migration("init.sql", "").is_err());
        assert!(migration("one_init.sql", "").is_err());
    }
}
