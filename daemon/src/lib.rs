//! huddled — the huddle coordination daemon.
//!
//! A tour of the layout:
//! - [`config`]: settings from defaults, `config/huddle.toml`, `HUDDLE_…` variables and flags.
//! - [`identity`]: bearer tokens (random, shown once, stored hashed) and the admin token.
//! - [`store`]: the `Store` trait — every durable operation — its rules shared by every
//!   backend (`store::rules`, input checks in `store::rules::validate`), the SQLite backend
//!   (a single group-commit writer and a read pool) and the PostgreSQL one (several replicas
//!   on one database, LISTEN/NOTIFY between them).
//! - [`hub`]: in-process fan-out after commit: SSE streams, long-polling claims and inboxes.
//! - [`http`]: the axum router (`http::app`), one file per area, one error type.
//! - [`leases`]: the sweeper that returns expired claims to the queue.
//! - [`retention`]: the sweeper that deletes what `[retention]` no longer keeps.
//! - [`webhooks`]: outbound notices of a team's events to the URLs its coordinator registered.
//! - [`metrics`]: what `/metrics` reports, measured where it happens.
//! - [`open_files`]: the open-file limit, raised at start; connection caps kept under it.
//!
//! [`run`] is the testable entry point: give it settings, a bound listener and a shutdown
//! future; it serves until the future completes, then drains and closes the database. It is
//! [`build`] (data directory, admin token, store: everything that can fail at start) followed
//! by [`serve`], so a test can fail at once with the start-up error and then serve.

#![forbid(unsafe_code)]

pub mod config;
pub mod files;
pub mod gate_deadlines;
pub mod http;
pub mod hub;
pub mod identity;
pub mod leases;
pub mod metrics;
pub mod open_files;
pub mod presence;
pub mod replicas;
pub mod retention;
pub mod store;
pub mod webhooks;
pub mod workspaces;

use config::Settings;
use http::AppState;
use hub::Hub;
use std::future::Future;
use std::sync::Arc;
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
    #[error("cannot listen on {addr} for /metrics: {source}")]
    MetricsListen {
        addr: String,
        source: std::io::Error,
    },
}

/// A daemon's state, built but not yet serving: the router for in-process tests, and the
/// pieces `run` needs to shut down cleanly.
pub struct Built {
    pub state: AppState,
    pub store: Arc<dyn Store>,
    pub admin_token_source: identity::AdminTokenSource,
}

/// Prepares the data directory, the admin token and the store.
pub async fn build(settings: Settings) -> Result<Built, DaemonError> {
    let dir = settings.server.data_dir.clone();
    let data_dir_error = |path: &std::path::Path| {
        let path = path.to_path_buf();
        move |source| DaemonError::DataDir { path, source }
    };
    files::private_dir(&dir).map_err(data_dir_error(&dir))?;
    // The SQLite files, when the store is SQLite (PostgreSQL keeps nothing here).
    let database =
        (settings.storage.backend == config::Backend::Sqlite).then(|| settings.database_path());
    if let Some(database) = &database {
        files::private_database(database).map_err(data_dir_error(database))?;
    }
    let (admin_token, admin_token_source) =
        identity::admin_token(&settings.server.admin_token, &dir)
            .map_err(DaemonError::AdminToken)?;
    let hub = Arc::new(Hub::new(settings.streams.buffer));
    let store = store::open::open(&settings, hub.clone()).await?;
    if let Some(database) = &database {
        files::private_side_files(database).map_err(data_dir_error(database))?;
    }
    let replicas = Arc::new(replicas::Replicas::default());
    let rate = Arc::new(http::limits::RequestRate::new(
        &settings.limits,
        replicas.clone(),
    ));
    let failed_auth = Arc::new(http::limits::FailedAuth::new(&settings.limits));
    let streams = Arc::new(http::limits::StreamSlots::new(
        &settings.limits,
        replicas.clone(),
    ));
    let state = AppState::new(http::AppParts {
        store: store.clone(),
        hub,
        settings: Arc::new(settings),
        admin_token: admin_token.into(),
        auth: Arc::new(http::AuthCache::new(100_000)),
        rate,
        failed_auth,
        streams,
        replicas,
        presence: Arc::default(),
        question_gauges: Arc::default(),
        workspaces: Arc::default(),
        shutdown: CancellationToken::new(),
    });
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
    serve(build(settings).await?, listener, shutdown).await
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
    let server = config::ServerSettings {
        max_connections: open_files::connection_cap(
            state.settings.server.max_connections,
            open_files::raise(),
        ),
        ..state.settings.server.clone()
    };
    let token_at = match &built.admin_token_source {
        identity::AdminTokenSource::Configured => "from HUDDLE_ADMIN_TOKEN / config".to_string(),
        identity::AdminTokenSource::File(path) => format!("in {}", path.display()),
    };
    tracing::info!(
        "huddled listening on http://{addr} · data in {} · admin token {token_at} · dashboard at http://{addr}/",
        built.store.describe(),
    );
    crate::metrics::handle();
    let upkeep = tokio::spawn(crate::metrics::upkeep(state.shutdown.clone()));
    let metrics_server = match state.settings.metrics.listen.as_str() {
        "" => None,
        addr => {
            let listener =
                TcpListener::bind(addr)
                    .await
                    .map_err(|source| DaemonError::MetricsListen {
                        addr: addr.to_string(),
                        source,
                    })?;
            let at = listener.local_addr().map_err(DaemonError::Serve)?;
            tracing::info!("metrics at http://{at}/metrics (no token)");
            let app = http::scrape::separate(state.clone());
            let stop = state.shutdown.clone();
            // The same guarded accept loop as the API (head timeout, connection cap), with a
            // cap of its own: no token is needed here, so it must not take the API's room.
            let settings = config::ServerSettings {
                max_connections: open_files::METRICS_MAX_CONNECTIONS,
                ..server.clone()
            };
            Some(tokio::spawn(async move {
                http::serve::serve(
                    listener,
                    app,
                    &settings,
                    async move { stop.cancelled().await },
                )
                .await;
            }))
        }
    };
    let forgetter = tokio::spawn(forget_revoked_tokens(state.clone()));
    let sweeper = tokio::spawn(leases::sweep(
        state.store.clone(),
        state.settings.tasks.lease_sweep_ms,
        state.shutdown.clone(),
    ));
    let pruner = tokio::spawn(retention::sweep(
        state.store.clone(),
        state.settings.retention.clone(),
        state.shutdown.clone(),
    ));
    let notifier = tokio::spawn(webhooks::run(
        state.store.clone(),
        state.settings.webhooks.clone(),
        state.shutdown.clone(),
    ));
    let deadlines = tokio::spawn(gate_deadlines::run(
        state.store.clone(),
        state.question_gauges.clone(),
        state.shutdown.clone(),
    ));
    let shrinker = tokio::spawn(forget_idle_rates(state.clone()));
    let presence = tokio::spawn(presence::flush(
        state.presence.clone(),
        state.store.clone(),
        state.shutdown.clone(),
    ));
    let heartbeat = tokio::spawn(replicas::heartbeat(
        state.replicas.clone(),
        state.store.clone(),
        std::time::Duration::from_millis(state.settings.limits.replica_heartbeat_ms.max(1)),
        std::time::Duration::from_millis(state.settings.limits.replica_expiry_ms.max(1)),
        state.shutdown.clone(),
    ));
    let cancel = state.shutdown.clone();
    let app = http::app(state.clone());
    http::serve::serve(listener, app, &server, async move {
        shutdown.await;
        tracing::info!("shutting down: finishing in-flight requests");
        cancel.cancel();
    })
    .await;
    state.shutdown.cancel();
    let _ = sweeper.await;
    let _ = pruner.await;
    let _ = notifier.await;
    let _ = deadlines.await;
    let _ = upkeep.await;
    if let Some(server) = metrics_server {
        let _ = server.await;
    }
    let _ = forgetter.await;
    let _ = shrinker.await;
    let _ = presence.await;
    let _ = heartbeat.await;
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

/// Keeps the token cache true to revocations and team deletions made anywhere: on this daemon,
/// or on another replica of the same PostgreSQL database (its listener reports them through
/// the hub). A missed notice clears the whole cache rather than keep a revoked token.
async fn forget_revoked_tokens(state: AppState) {
    use tokio::sync::broadcast::error::RecvError;
    let mut revoked = state.hub.subscribe_revocations();
    let mut deleted = state.hub.subscribe_deleted_teams();
    loop {
        tokio::select! {
            _ = state.shutdown.cancelled() => return,
            d = deleted.recv() => match d {
                Ok(team_id) => state.auth.forget_team(team_id),
                Err(RecvError::Lagged(_)) => state.auth.clear(),
                Err(RecvError::Closed) => return,
            },
            r = revoked.recv() => match r {
                Ok(r) => state.auth.forget_agent(r.team_id, &r.agent, r.valid_token_hash.as_deref()),
                Err(RecvError::Lagged(_)) => state.auth.clear(),
                Err(RecvError::Closed) => return,
            },
        }
    }
}
