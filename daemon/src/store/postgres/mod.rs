//! PostgreSQL backend on sqlx: several `huddled` replicas share one database.
//!
//! Every write is one transaction on a pooled connection. A write to a team first locks the
//! team's row (which holds its message and event sequences), so a team's writes are serialised
//! across replicas: sequences are gapless and commit in sequence order. Claims pick rows with
//! `FOR UPDATE SKIP LOCKED`. Before committing, a transaction announces what it added with
//! `pg_notify` (team, message and event ranges, "tasks changed"); every replica's
//! `listener` reads those rows after the commit and feeds its in-process hub, so streams,
//! long-polling claims and inboxes on any replica see every replica's writes, in order.

mod agents;
mod analyzer;
mod batcher;
mod claims;
mod completions;
mod deps;
mod export;
mod gates;
mod health;
mod listener;
mod memory;
mod messages;
mod redact;
mod retention;
mod rows;
mod schema;
mod search;
mod store_impl;
mod task_create;
mod task_state;
mod tasks;
mod team_admin;
mod test_history;
mod tx;
mod webhooks;

use super::{StoreError, StoreResult};
use crate::config::LimitSettings;
use crate::hub::Hub;
use analyzer::Analyzer;
use batcher::Batcher;
use huddle_wire::limits::MAX_CLAIM_BATCH;
pub use redact::redact;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::ConnectOptions;
use sqlx::PgPool;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The NOTIFY channel every replica listens on.
pub const CHANNEL: &str = "huddle_changes";

/// The database's time in milliseconds since the epoch: the one clock every replica shares for
/// leases, expiry and timestamps (a replica's own clock may be off by any amount).
pub(crate) const DB_NOW_MS: &str = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

/// How to reach the database and the limits the store applies.
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    pub url: String,
    pub pool_size: u32,
    /// Most writes of one team run in one transaction (group commit, `batcher.rs`).
    pub max_batch: usize,
    pub default_max_attempts: i64,
    pub memory_max_bytes: usize,
    pub memory_history_limit: usize,
    pub history: crate::config::HistorySettings,
    pub limits: LimitSettings,
    /// Apply missing migrations (false: only check, refusing an older schema).
    pub migrate: bool,
    /// Longest wait for a pooled connection before a request is answered 503.
    pub acquire_timeout: Duration,
    /// The health probe's timeout (and `/readyz`'s): past it the database counts as unreachable.
    pub health_timeout: Duration,
    /// Leases live when the database became unreachable last at least this long after it
    /// returns (`[tasks] default_lease_ms`).
    pub outage_lease_grace_ms: i64,
}

pub struct PostgresStore {
    pool: PgPool,
    batcher: Arc<Batcher>,
    analyzer: Arc<Analyzer>,
    options: PostgresOptions,
    /// Ends the listener and the health probe on close.
    stop: CancellationToken,
    listener: tokio::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
    health: Arc<health::Health>,
    probe: tokio::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl PostgresStore {
    /// Connects, applies `migrations/postgres/` (once, whichever replica comes first: sqlx
    /// takes an advisory lock) or only checks them (`migrate = false`), and starts this
    /// replica's listener.
    pub async fn open(options: PostgresOptions, hub: Arc<Hub>) -> StoreResult<Self> {
        let pool = connect_until_reachable(&options).await?;
        super::schema::log(&schema::prepare(&pool, options.migrate).await?);
        let stop = CancellationToken::new();
        let task = listener::start(&pool, hub, stop.clone()).await?;
        let (health, probe) = health::start(
            health::ProbeOptions {
                connect: connect_options(&options)?,
                timeout: options.health_timeout,
                lease_grace_ms: options.outage_lease_grace_ms,
            },
            stop.clone(),
        );
        Ok(PostgresStore {
            batcher: Batcher::new(pool.clone(), options.max_batch),
            analyzer: Analyzer::new(pool.clone()),
            pool,
            options,
            stop,
            listener: tokio::sync::Mutex::new(Some(task)),
            health,
            probe: tokio::sync::Mutex::new(Some(probe)),
        })
    }

    /// `huddled migrate`: applies the missing migrations and disconnects.
    pub async fn migrate(options: PostgresOptions) -> StoreResult<super::schema::SchemaState> {
        let pool = connect_until_reachable(&options).await?;
        let state = schema::prepare(&pool, true).await;
        pool.close().await;
        state
    }
}

fn connect_options(options: &PostgresOptions) -> StoreResult<PgConnectOptions> {
    Ok(PgConnectOptions::from_str(&options.url)
        .map_err(|e| {
            StoreError::Unavailable(format!("database_url {}: {e}", redact(&options.url)))
        })?
        // A write waiting for its team's lock is normal under load, not a slow query.
        .log_slow_statements(log::LevelFilter::Warn, Duration::from_secs(10))
        // Room for every statement prepared per connection: ~50, plus one claim per
        // `max` (at most MAX_CLAIM_BATCH, see `claims::claim`), so none is re-prepared.
        .statement_cache_capacity(64 + MAX_CLAIM_BATCH as usize)
        // Not sent: pgbouncer refuses unknown startup parameters by default, and huddle reads
        // no floating-point text.
        .extra_float_digits(None))
}

/// A replica started while the database is unreachable waits for it (saying so) rather than
/// exit; a refusal (a wrong password, no such database) fails at once.
async fn connect_until_reachable(options: &PostgresOptions) -> StoreResult<PgPool> {
    let mut attempt = 0u32;
    loop {
        let e = match PgPoolOptions::new()
            .max_connections(options.pool_size)
            // Short: while the database is unreachable a request is answered 503, not held.
            .acquire_timeout(options.acquire_timeout)
            .connect_with(connect_options(options)?)
            .await
        {
            Ok(pool) => return Ok(pool),
            Err(e) => e,
        };
        if !matches!(reachable(&e), Reachable::No) {
            return Err(StoreError::Unavailable(format!(
                "connecting to {}: {e}",
                redact(&options.url)
            )));
        }
        attempt += 1;
        tracing::warn!(
            attempt,
            "the database at {} is unreachable ({e}); retrying until it answers",
            redact(&options.url)
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Whether an error says the database cannot be reached (worth waiting for) or refused us.
enum Reachable {
    No,
    Refused,
}

fn reachable(e: &sqlx::Error) -> Reachable {
    match e {
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut => Reachable::No,
        sqlx::Error::Database(db) => {
            // Connection failures (08000, 08001, 08003, 08006), a server shutting down or
            // starting up (57P01–57P03), no connection slot free (53300). Not a protocol
            // violation (08P01, such as a parameter a pooler refuses) or a rejected login.
            let code = db.code().unwrap_or_default();
            if matches!(
                code.as_ref(),
                "08000" | "08001" | "08003" | "08006" | "57P01" | "57P02" | "57P03" | "53300"
            ) {
                Reachable::No
            } else {
                Reachable::Refused
            }
        }
        _ => Reachable::Refused,
    }
}

/// Connection trouble, a full disk, a server shutting down or a read-only standby mean the
/// store cannot serve (503); anything else is a bug (500, logged).
pub(crate) fn map_pg_error(e: sqlx::Error) -> StoreError {
    match &e {
        sqlx::Error::Io(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::Tls(_) => StoreError::Unavailable(e.to_string()),
        sqlx::Error::Database(db) => {
            let code = db.code().unwrap_or_default();
            // 08 connection, 53 insufficient resources (disk full), 57P shutdown, 25006 read-only.
            if code.starts_with("08")
                || code.starts_with("53")
                || code.starts_with("57P")
                || code == "25006"
            {
                StoreError::Unavailable(e.to_string())
            } else {
                StoreError::Internal(e.to_string())
            }
        }
        _ => StoreError::Internal(e.to_string()),
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        map_pg_error(e)
    }
}
