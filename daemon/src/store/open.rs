//! Opens the configured backend behind the one `Store` trait.

#[cfg(feature = "postgres")]
use super::postgres::{PostgresOptions, PostgresStore};
#[cfg(feature = "sqlite")]
use super::sqlite::{SqliteOptions, SqliteStore};
use super::{Store, StoreError, StoreResult};
use crate::config::Settings;
use crate::hub::Hub;
use std::sync::Arc;

pub use crate::config::Backend;

/// Opens (creating or migrating) the store `settings` name. Committed changes reach `hub`:
/// straight from the SQLite writer, or through LISTEN/NOTIFY from every PostgreSQL replica.
pub async fn open(settings: &Settings, hub: Arc<Hub>) -> StoreResult<Arc<dyn Store>> {
    match settings.storage.backend {
        #[cfg(feature = "sqlite")]
        Backend::Sqlite => {
            let options = SqliteOptions {
                path: settings.database_path(),
                synchronous: settings.storage.synchronous,
                read_connections: settings.storage.read_connections,
                max_batch: settings.storage.max_batch,
                default_max_attempts: settings.tasks.default_max_attempts,
                memory_max_bytes: settings.memory.max_bytes,
                memory_history_limit: settings.memory.history_limit,
                history: settings.history.clone(),
                limits: settings.limits.clone(),
            };
            // Opening runs migrations and starts the writer thread: blocking work.
            let store = tokio::task::spawn_blocking(move || SqliteStore::open(options, hub))
                .await
                .map_err(|e| StoreError::Internal(e.to_string()))??;
            Ok(Arc::new(store))
        }
        #[cfg(feature = "postgres")]
        Backend::Postgres => {
            if settings.storage.database_url.trim().is_empty() {
                return Err(StoreError::Unavailable(
                    "[storage] backend = \"postgres\" needs a database_url (or HUDDLE_DATABASE_URL)"
                        .into(),
                ));
            }
            let store = PostgresStore::open(
                PostgresOptions {
                    url: settings.storage.database_url.clone(),
                    pool_size: settings.storage.pool_size.max(2),
                    max_batch: settings.storage.max_batch,
                    default_max_attempts: settings.tasks.default_max_attempts,
                    memory_max_bytes: settings.memory.max_bytes,
                    memory_history_limit: settings.memory.history_limit,
                    history: settings.history.clone(),
                    limits: settings.limits.clone(),
                },
                hub,
            )
            .await?;
            Ok(Arc::new(store))
        }
        #[allow(unreachable_patterns)]
        backend => Err(StoreError::Unavailable(format!(
            "this huddled was built without the {name} backend (cargo feature `{name}`)",
            name = backend.name()
        ))),
    }
}
