//! Opens the configured backend behind the one `Store` trait, and the one-shot operator
//! commands on it (`huddled migrate`, `huddled backup`).

use super::error::{StoreError, StoreResult};
#[cfg(feature = "postgres")]
use super::postgres::{PostgresOptions, PostgresStore};
use super::schema::SchemaState;
#[cfg(feature = "sqlite")]
use super::sqlite::{SqliteOptions, SqliteStore};
use super::Store;
use crate::config::Settings;
use crate::hub::Hub;
use std::path::Path;
use std::sync::Arc;
#[cfg(feature = "postgres")]
use std::time::Duration;

use crate::config::Backend;

/// Opens (creating or migrating) the store `settings` name. Committed changes reach `hub`:
/// straight from the SQLite writer, or through LISTEN/NOTIFY from every PostgreSQL replica.
pub async fn open(settings: &Settings, hub: Arc<Hub>) -> StoreResult<Arc<dyn Store>> {
    match settings.storage.backend {
        #[cfg(feature = "sqlite")]
        Backend::Sqlite => {
            let options = sqlite_options(settings);
            // Opening runs migrations and starts the writer thread: blocking work.
            let store = tokio::task::spawn_blocking(move || SqliteStore::open(options, hub))
                .await
                .map_err(|e| StoreError::Internal(e.to_string()))??;
            Ok(Arc::new(store))
        }
        #[cfg(feature = "postgres")]
        Backend::Postgres => {
            let store = PostgresStore::open(postgres_options(settings)?, hub).await?;
            Ok(Arc::new(store))
        }
        #[allow(unreachable_patterns)]
        backend => Err(without(backend)),
    }
}

/// `huddled migrate`: applies the missing migrations of the configured store and returns
/// what the schema is now.
pub async fn migrate(settings: &Settings) -> StoreResult<SchemaState> {
    match settings.storage.backend {
        #[cfg(feature = "sqlite")]
        Backend::Sqlite => {
            let path = settings.database_path();
            tokio::task::spawn_blocking(move || SqliteStore::migrate(&path))
                .await
                .map_err(|e| StoreError::Internal(e.to_string()))?
        }
        #[cfg(feature = "postgres")]
        Backend::Postgres => PostgresStore::migrate(postgres_options(settings)?).await,
        #[allow(unreachable_patterns)]
        backend => Err(without(backend)),
    }
}

/// `huddled backup --to FILE`: a consistent copy of the SQLite database, safe while a daemon
/// serves it. PostgreSQL has its own tools (`pg_dump`).
pub async fn backup(settings: &Settings, to: &Path) -> StoreResult<()> {
    match settings.storage.backend {
        #[cfg(feature = "sqlite")]
        Backend::Sqlite => {
            let (from, to) = (settings.database_path(), to.to_path_buf());
            tokio::task::spawn_blocking(move || super::sqlite::backup(&from, &to))
                .await
                .map_err(|e| StoreError::Internal(e.to_string()))?
        }
        _ => {
            let _ = to;
            Err(StoreError::Unavailable(
                "huddled backup copies the SQLite database; back PostgreSQL up with pg_dump".into(),
            ))
        }
    }
}

#[cfg(feature = "sqlite")]
fn sqlite_options(settings: &Settings) -> SqliteOptions {
    SqliteOptions {
        path: settings.database_path(),
        synchronous: settings.storage.synchronous,
        read_connections: settings.storage.read_connections,
        max_batch: settings.storage.max_batch,
        default_max_attempts: settings.tasks.default_max_attempts,
        memory_max_bytes: settings.memory.max_bytes,
        memory_history_limit: settings.memory.history_limit,
        history: settings.history.clone(),
        limits: settings.limits.clone(),
        migrate: settings.storage.migrate,
        outage_lease_grace_ms: settings.tasks.default_lease_ms as i64,
    }
}

#[cfg(feature = "postgres")]
fn postgres_options(settings: &Settings) -> StoreResult<PostgresOptions> {
    if settings.storage.database_url.trim().is_empty() {
        return Err(StoreError::Unavailable(
            "[storage] backend = \"postgres\" needs a database_url (or HUDDLE_DATABASE_URL)".into(),
        ));
    }
    Ok(PostgresOptions {
        url: settings.storage.database_url.clone(),
        direct_url: Some(settings.storage.direct_database_url.trim())
            .filter(|u| !u.is_empty())
            .map(str::to_string),
        pool_size: settings.storage.pool_size.max(2),
        max_batch: settings.storage.max_batch,
        batches_per_team: settings.storage.batches_per_team.max(1),
        default_max_attempts: settings.tasks.default_max_attempts,
        memory_max_bytes: settings.memory.max_bytes,
        memory_history_limit: settings.memory.history_limit,
        history: settings.history.clone(),
        limits: settings.limits.clone(),
        migrate: settings.storage.migrate,
        acquire_timeout: Duration::from_millis(settings.storage.acquire_timeout_ms.max(1)),
        health_timeout: Duration::from_millis(settings.storage.health_timeout_ms.max(1)),
        outage_lease_grace_ms: settings.tasks.default_lease_ms as i64,
    })
}

#[allow(dead_code)]
fn without(backend: Backend) -> StoreError {
    StoreError::Unavailable(format!(
        "this huddled was built without the {name} backend (cargo feature `{name}`)",
        name = backend.name()
    ))
}
