//! PostgreSQL backend on sqlx: several `huddled` replicas share one database.
//!
//! Every write is one transaction on a pooled connection. Most writes to a team first take the
//! team's lock, so they are serialised across replicas; claims and completions take none and
//! lock only the task rows they change (claims pick with `FOR UPDATE SKIP LOCKED`). Every write
//! numbers its events in its last statement, which holds the team's row to the commit, so
//! sequences are gapless and commit in sequence order (`tx.rs`). Before committing, a transaction announces what it added with
//! `pg_notify` (team, message and event ranges, "tasks changed"); every replica's
//! `listener` reads those rows after the commit and feeds its in-process hub, so streams,
//! long-polling claims and inboxes on any replica see every replica's writes, in order.
//!
//! Each area's functions take the same parameters as their SQLite counterparts
//! (`store/sqlite/`), and `store_impl.rs` repeats the trait's signatures: a repetition on
//! purpose (async sqlx calls in a team's transaction here, blocking rusqlite calls in a writer
//! job there). What they decide is written once, in `store/rules/`.

mod agents;
mod analyzer;
mod announcement;
mod batcher;
mod claims;
mod completions;
mod db;
mod deps;
mod export;
mod gates;
mod health;
mod import;
mod listener;
mod memory;
mod messages;
mod progress;
mod redact;
mod replicas;
mod retention;
mod rows;
mod schema;
mod scope_claims;
mod search;
mod spend;
mod spend_calls;
mod spend_report;
mod store_impl;
mod task_create;
mod task_state;
mod tasks;
mod team_admin;
mod test_history;
mod tx;
mod usage;
mod webhooks;

use super::error::{StoreError, StoreResult};
use super::read_shares::ReadShares;
use crate::config::LimitSettings;
use crate::hub::Hub;
use analyzer::Analyzer;
use batcher::Batcher;
use db::{Pool, Statements};
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

/// How to reach the database and the limits the store applies. Its `Debug` shows the URLs
/// without credentials.
#[derive(Clone)]
pub struct PostgresOptions {
    pub url: String,
    /// A direct connection to the database for LISTEN, migrations, the health probe and
    /// `ANALYZE`, when `url` goes through a pooler in transaction mode (`[storage]
    /// direct_database_url`). Then the pooled connections use no named prepared statements
    /// and read in transactions (`db.rs`). `None`: `url` is direct, and used for everything.
    pub direct_url: Option<String>,
    pub pool_size: u32,
    /// Most writes of one team run in one transaction (group commit, `batcher.rs`).
    pub max_batch: usize,
    /// A team's batches a replica runs at once (`batcher.rs`).
    pub batches_per_team: usize,
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

impl std::fmt::Debug for PostgresOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresOptions")
            .field("url", &redact::redact(&self.url))
            .field(
                "direct_url",
                &self.direct_url.as_deref().map(redact::redact),
            )
            .field("pool_size", &self.pool_size)
            .field("max_batch", &self.max_batch)
            .field("migrate", &self.migrate)
            .finish_non_exhaustive()
    }
}

pub struct PostgresStore {
    pool: Pool,
    /// The direct connections (the pool itself when there is no pooler): LISTEN, `ANALYZE`.
    direct: PgPool,
    /// Connections of their own for heartbeat marks ([`claims::hear_heartbeat`]): a pool tied
    /// up by team batches must not delay the mark that protects a lease from other replicas'
    /// sweeps.
    marks: Pool,
    batcher: Arc<Batcher>,
    /// Each team's share of the pool for reads (`[limits] max_reads_per_team`).
    read_shares: ReadShares,
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
    /// takes a session advisory lock, so on the direct connection) or only checks them
    /// (`migrate = false`), and starts this replica's listener.
    pub async fn open(options: PostgresOptions, hub: Arc<Hub>) -> StoreResult<Self> {
        let (pool, direct, marks) = connect(&options).await?;
        super::schema::log(&schema::prepare(&direct, options.migrate).await?);
        let stop = CancellationToken::new();
        let task = listener::start(&direct, hub, stop.clone()).await?;
        let (health, probe) = health::start(
            health::ProbeOptions {
                connect: connect_options(options.direct_url(), Statements::Named)?,
                timeout: options.health_timeout,
                lease_grace_ms: options.outage_lease_grace_ms,
            },
            stop.clone(),
        );
        Ok(PostgresStore {
            batcher: Batcher::new(pool.clone(), options.max_batch, options.batches_per_team),
            analyzer: Analyzer::new(direct.clone()),
            // At most all but one of the pool, and waited for no longer than a pooled
            // connection is: past that the read is answered 503, as when the pool is busy.
            read_shares: ReadShares::new(
                options
                    .limits
                    .max_reads_per_team
                    .min(options.pool_size.saturating_sub(1) as usize),
                Some(options.acquire_timeout),
            ),
            pool,
            direct,
            marks,
            options,
            stop,
            listener: tokio::sync::Mutex::new(Some(task)),
            health,
            probe: tokio::sync::Mutex::new(Some(probe)),
        })
    }

    /// `huddled migrate`: applies the missing migrations and disconnects.
    pub async fn migrate(options: PostgresOptions) -> StoreResult<super::schema::SchemaState> {
        let direct =
            connect_until_reachable(&options, options.direct_url(), 1, Statements::Named).await?;
        let state = schema::prepare(&direct, true).await;
        direct.close().await;
        state
    }
}

impl PostgresOptions {
    /// The URL of a direct connection: `direct_url`, else `url`.
    fn direct_url(&self) -> &str {
        self.direct_url.as_deref().unwrap_or(&self.url)
    }
}

/// Connections that hold more than one transaction's state on the server (LISTEN, sqlx's
/// migration lock) or only run in the background: the listener's and a catch-up read.
const DIRECT_POOL_SIZE: u32 = 2;

/// Connections for heartbeat marks, beside the pool (`PostgresStore::marks`): straight to
/// PostgreSQL (behind a pooler, its server connections may all be held by team batches).
const MARKS_POOL_SIZE: u32 = 2;

/// The pooled connections, the direct ones (the same pool when `url` is direct) and the ones
/// for heartbeat marks.
async fn connect(options: &PostgresOptions) -> StoreResult<(Pool, PgPool, Pool)> {
    let marks = Pool::new(
        connect_until_reachable(
            options,
            options.direct_url(),
            MARKS_POOL_SIZE,
            Statements::Named,
        )
        .await?,
        Statements::Named,
    );
    let Some(direct_url) = options.direct_url.as_deref() else {
        let pool =
            connect_until_reachable(options, &options.url, options.pool_size, Statements::Named)
                .await?;
        return Ok((Pool::new(pool.clone(), Statements::Named), pool, marks));
    };
    let direct =
        connect_until_reachable(options, direct_url, DIRECT_POOL_SIZE, Statements::Named).await?;
    let pool = connect_until_reachable(
        options,
        &options.url,
        options.pool_size,
        Statements::Unnamed,
    )
    .await?;
    Ok((Pool::new(pool, Statements::Unnamed), direct, marks))
}

fn connect_options(url: &str, statements: Statements) -> StoreResult<PgConnectOptions> {
    let options = PgConnectOptions::from_str(url)
        .map_err(|e| StoreError::Unavailable(format!("database URL {}: {e}", redact(url))))?
        // A write waiting for its team's lock is normal under load, not a slow query.
        .log_slow_statements(log::LevelFilter::Warn, Duration::from_secs(10))
        // Not sent: pgbouncer refuses unknown startup parameters by default, and huddle reads
        // no floating-point text.
        .extra_float_digits(None);
    Ok(match statements {
        // Room for every statement prepared per connection: ~50, plus one claim per
        // `max` (at most MAX_CLAIM_BATCH, see `claims::claim`), so none is re-prepared.
        Statements::Named => options.statement_cache_capacity(64 + MAX_CLAIM_BATCH as usize),
        // Nothing is prepared under a name, so there is nothing to cache (`db.rs`).
        Statements::Unnamed => options.statement_cache_capacity(0),
    })
}

/// A replica started while the database is unreachable waits for it (saying so) rather than
/// exit; a refusal (a wrong password, no such database) fails at once.
async fn connect_until_reachable(
    options: &PostgresOptions,
    url: &str,
    size: u32,
    statements: Statements,
) -> StoreResult<PgPool> {
    let mut attempt = 0u32;
    loop {
        let e = match PgPoolOptions::new()
            .max_connections(size)
            // Short: while the database is unreachable a request is answered 503, not held.
            .acquire_timeout(options.acquire_timeout)
            .connect_with(connect_options(url, statements)?)
            .await
        {
            Ok(pool) => return Ok(pool),
            Err(e) => e,
        };
        if !matches!(reachable(&e), Reachable::No) {
            return Err(StoreError::Unavailable(format!(
                "connecting to {}: {e}",
                redact(url)
            )));
        }
        attempt += 1;
        tracing::warn!(
            attempt,
            "the database at {} is unreachable ({e}); retrying until it answers",
            redact(url)
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

/// PostgreSQL's "deadlock detected".
const DEADLOCK: &str = "40P01";
/// How a lost deadlock reads in a [`StoreError::Unavailable`].
pub(crate) const DEADLOCK_TEXT: &str = "the write lost a deadlock";

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
            } else if code == DEADLOCK {
                // Claims and completions lock rows without the team lock; the batcher runs a
                // write that lost a deadlock again (`batcher.rs`), and answers 503 if it
                // keeps losing.
                StoreError::Unavailable(format!("{DEADLOCK_TEXT}: {e}"))
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
