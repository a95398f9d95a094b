//! huddled — the huddle coordination daemon.
//!
//! A tour of the layout:
//! - [`config`]: settings from defaults, `config/huddle.toml`, `HUDDLE_…` variables and flags.
//! - [`identity`]: bearer tokens (random, shown once, stored hashed) and the admin token.
//! - [`store`]: the `Store` trait — every durable operation — and its SQLite backend with a
//!   single group-commit writer and a read pool.
//! - [`hub`]: in-process fan-out after commit: SSE streams, long-polling claims and inboxes.
//! - [`http`]: the axum router (`http::app`), one file per area, one error type.
//! - [`leases`]: the sweeper that returns expired claims to the queue.
//! - [`validate`]: input rules shared by every backend.
//!
//! [`run`] is the testable entry point: give it settings, a bound listener and a shutdown
//! future; it serves until the future completes, then drains and closes the database. It is
//! [`build`] (data directory, admin token, store: everything that can fail at start) followed
//! by [`serve`], so a test can fail at once with the start-up error and then serve.

#![forbid(unsafe_code)]

pub mod config;
pub mod files;
pub mod http;
pub mod hub;
pub mod identity;
pub mod leases;
pub mod store;
pub mod validate;

use config::Settings;
use http::AppState;
use hub::Hub;
use std::future::Future;
use std::sync::Arc;
use store::sqlite::{SqliteOptions, SqliteStore};
use store::Store;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error("data directory {path}: {source}")]
    DataDir {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("admin token: {0}")]
    AdminToken(std::io::Error),
    #[error("opening the database: {0}")]
    Store(#[from] store::StoreError),
    #[error("serving: {0}")]
    Serve(std::io::Error),
}

/// A daemon's state, built but not yet serving: the router for in-process tests, and the
/// pieces `run` needs to shut down cleanly.
pub struct Built {
    pub state: AppState,
    pub store: Arc<SqliteStore>,
    pub admin_token_source: identity::AdminTokenSource,
}

/// Prepares the data directory, the admin token and the store.
pub fn build(settings: Settings) -> Result<Built, DaemonError> {
    let dir = settings.server.data_dir.clone();
    let data_dir_error = |path: &std::path::Path| {
        let path = path.to_path_buf();
        move |source| DaemonError::DataDir { path, source }
    };
    files::private_dir(&dir).map_err(data_dir_error(&dir))?;
    let database = settings.database_path();
    files::private_database(&database).map_err(data_dir_error(&database))?;
    let (admin_token, admin_token_source) =
        identity::admin_token(&settings.server.admin_token, &dir)
            .map_err(DaemonError::AdminToken)?;
    let hub = Arc::new(Hub::new(settings.streams.buffer));
    let store = Arc::new(SqliteStore::open(
        SqliteOptions {
            path: settings.database_path(),
            synchronous: settings.storage.synchronous,
            read_connections: settings.storage.read_connections,
            max_batch: settings.storage.max_batch,
            default_max_attempts: settings.tasks.default_max_attempts,
            memory_max_bytes: settings.memory.max_bytes,
            memory_history_limit: settings.memory.history_limit,
            limits: settings.limits.clone(),
        },
        hub.clone(),
    )?);
    files::private_side_files(&database).map_err(data_dir_error(&database))?;
    let rate = Arc::new(http::limits::RequestRate::new(&settings.limits));
    let failed_auth = Arc::new(http::limits::FailedAuth::new(&settings.limits));
    let streams = Arc::new(http::limits::StreamSlots::new(
        settings.limits.max_streams_per_token,
    ));
    let state = AppState {
        store: store.clone() as Arc<dyn Store>,
        hub,
        settings: Arc::new(settings),
        admin_token: admin_token.into(),
        auth: Arc::new(http::AuthCache::new(100_000)),
        rate,
        failed_auth,
        streams,
        shutdown: CancellationToken::new(),
    };
    Ok(Built {
        state,
        store,
        admin_token_source,
    })
}

/// Builds the daemon from `settings` and serves it on `listener` until `shutdown` completes.
pub async fn run(
    settings: Settings,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), DaemonError> {
    serve(build(settings)?, listener, shutdown).await
}

/// Serves a [`build`] daemon on `listener` until `shutdown` completes; then stops accepting,
/// ends streams and long polls, lets in-flight requests finish, and closes the database.
pub async fn serve(
    built: Built,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), DaemonError> {
    let state = built.state.clone();
    let addr = listener.local_addr().map_err(DaemonError::Serve)?;
    let token_at = match &built.admin_token_source {
        identity::AdminTokenSource::Configured => "from HUDDLE_ADMIN_TOKEN / config".to_string(),
        identity::AdminTokenSource::File(path) => format!("in {}", path.display()),
    };
    tracing::info!(
        "huddled listening on http://{addr} · data in {} (synchronous={:?}) · admin token {token_at} · dashboard at http://{addr}/",
        built.store.path().display(),
        state.settings.storage.synchronous,
    );
    let sweeper = tokio::spawn(leases::sweep(
        state.store.clone(),
        state.settings.tasks.lease_sweep_ms,
        state.shutdown.clone(),
    ));
    let shrinker = tokio::spawn(forget_idle_rates(state.clone()));
    let cancel = state.shutdown.clone();
    let app = http::app(state.clone());
    http::serve::serve(listener, app, &state.settings.server, async move {
        shutdown.await;
        tracing::info!("shutting down: finishing in-flight requests");
        cancel.cancel();
    })
    .await;
    state.shutdown.cancel();
    let _ = sweeper.await;
    let _ = shrinker.await;
    built.store.close().await;
    tracing::info!("database closed");
    Ok(())
}

/// Every minute, forgets the request-rate buckets of tokens that have been idle long enough to
/// be full again (rotated and revoked tokens included), so the map tracks live tokens only.
async fn forget_idle_rates(state: AppState) {
    let mut every = tokio::time::interval(std::time::Duration::from_secs(60));
    loop {
        tokio::select! {
            _ = every.tick() => state.rate.shrink(),
            _ = state.shutdown.cancelled() => return,
        }
    }
}
