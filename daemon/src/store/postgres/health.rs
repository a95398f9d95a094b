//! This replica's view of whether the database is reachable, kept by a probe on a connection
//! of its own (so a busy pool never looks like an outage), with its own short timeout.
//!
//! While the probe fails, requests are answered 503 at once (`http::outage`), `/readyz` says
//! unavailable, and this replica's lease sweeps stop. When the database answers again, leases
//! that were live when it became unreachable are first renewed — their holders could not
//! heartbeat through the outage — and only then does the replica serve and sweep again.

use super::super::error::{StoreError, StoreResult};
use super::DB_NOW_MS;
use sqlx::postgres::PgConnectOptions;
use sqlx::{ConnectOptions, Connection, PgConnection};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// How often the probe asks the database.
const PROBE_EVERY: Duration = Duration::from_millis(250);

pub struct Health {
    up: watch::Sender<bool>,
    timeout: Duration,
}

impl Health {
    /// Whether the last probe reached the database.
    pub fn is_up(&self) -> bool {
        *self.up.borrow()
    }

    /// Changes to [`Health::is_up`], for requests that give up when the database goes away.
    pub fn watch(&self) -> watch::Receiver<bool> {
        self.up.subscribe()
    }

    /// `Unavailable` while the last probe failed.
    pub fn serving(&self) -> StoreResult<()> {
        if self.is_up() {
            Ok(())
        } else {
            Err(StoreError::Unavailable(
                "the database is unreachable".into(),
            ))
        }
    }
}

/// `/readyz` on PostgreSQL: the probe's state, then one round trip on the pool within the
/// probe's timeout (a pool that cannot give a connection in that time is not ready either).
pub async fn ping(pool: &super::db::Pool, health: &Health) -> StoreResult<()> {
    if pool.is_closed() {
        return Err(StoreError::Unavailable("the store is closed".into()));
    }
    health.serving()?;
    let round_trip = async {
        let mut reader = pool.read().await?;
        sqlx::query("select 1").execute(reader.db()).await
    };
    match tokio::time::timeout(health.timeout, round_trip).await {
        Ok(done) => done.map(drop).map_err(Into::into),
        Err(_) => Err(StoreError::Unavailable(
            "the database did not answer within the health timeout".into(),
        )),
    }
}

/// What the probe needs: where the database is, how long to wait, and the lease to give
/// holders cut off by an outage.
pub struct ProbeOptions {
    pub connect: PgConnectOptions,
    pub timeout: Duration,
    pub lease_grace_ms: i64,
}

/// Starts the probe; the database is taken as reachable (the store just opened on it).
pub fn start(
    options: ProbeOptions,
    stop: CancellationToken,
) -> (Arc<Health>, tokio::task::JoinHandle<()>) {
    let health = Arc::new(Health {
        up: watch::Sender::new(true),
        timeout: options.timeout,
    });
    let task = tokio::spawn(probe(health.clone(), options, stop));
    (health, task)
}

async fn probe(health: Arc<Health>, options: ProbeOptions, stop: CancellationToken) {
    let mut conn: Option<PgConnection> = None;
    // The database's time at the last answer: leases live then are renewed after an outage.
    let mut last_answer_ms: Option<i64> = None;
    let mut down_since: Option<Instant> = None;
    // A slow answer alone is load, not an outage: two in a row are (a refusal is at once).
    let mut slow_answers = 0u32;
    let mut tick = tokio::time::interval(PROBE_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        let answered = ask(&mut conn, &options).await;
        match &answered {
            Err(Failure::Slow) if down_since.is_none() && slow_answers == 0 => {
                slow_answers += 1;
                tracing::debug!("the database did not answer the health probe in time");
                continue;
            }
            _ => slow_answers = 0,
        }
        match (answered, down_since) {
            (Ok(now_ms), None) => last_answer_ms = Some(now_ms),
            (Ok(now_ms), Some(since)) => {
                let renewed = match (conn.as_mut(), last_answer_ms) {
                    (Some(c), Some(live_at)) => renew_leases(c, &options, live_at).await,
                    _ => Ok(0),
                };
                match renewed {
                    Ok(renewed) => {
                        tracing::info!(
                            after_ms = since.elapsed().as_millis() as u64,
                            renewed_leases = renewed,
                            "the database is reachable again; serving"
                        );
                        last_answer_ms = Some(now_ms);
                        down_since = None;
                        health.up.send_replace(true);
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "renewing leases after the outage failed; retrying");
                        conn = None;
                    }
                }
            }
            (Err(e), None) => {
                tracing::error!(
                    error = %e,
                    "the database is unreachable: answering 503 until it returns"
                );
                conn = None;
                down_since = Some(Instant::now());
                health.up.send_replace(false);
            }
            (Err(_), Some(_)) => conn = None,
        }
    }
}

/// Why the probe got no answer.
enum Failure {
    /// None within the health timeout.
    Slow,
    /// Refused, cut off, or an error.
    Failed(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Slow => f.write_str("no answer within the health timeout"),
            Failure::Failed(e) => f.write_str(e),
        }
    }
}

/// One round trip, reconnecting first if needed, within the timeout: the database's time.
async fn ask(conn: &mut Option<PgConnection>, options: &ProbeOptions) -> Result<i64, Failure> {
    let asked = tokio::time::timeout(options.timeout, async {
        if conn.is_none() {
            *conn = Some(
                options
                    .connect
                    .connect()
                    .await
                    .map_err(|e| Failure::Failed(e.to_string()))?,
            );
        }
        let c = conn.as_mut().expect("connected above");
        sqlx::query_scalar::<_, i64>(&format!("select {DB_NOW_MS}"))
            .fetch_one(c)
            .await
            .map_err(|e| Failure::Failed(e.to_string()))
    })
    .await;
    let answered = asked.unwrap_or(Err(Failure::Slow));
    if answered.is_err() {
        if let Some(c) = conn.take() {
            let _ = tokio::time::timeout(options.timeout, c.close()).await;
        }
    }
    answered
}

/// Leases that were live at `live_at_ms` (the last answer before the outage) are extended to
/// at least `lease_grace_ms` from now, so their holders can heartbeat again. Idempotent across
/// replicas that all saw the outage: each sets the same floor, none adds to another's.
async fn renew_leases(
    conn: &mut PgConnection,
    options: &ProbeOptions,
    live_at_ms: i64,
) -> Result<u64, String> {
    let sql = format!(
        "update tasks set lease_expires_at = {DB_NOW_MS} + $2
         where status = 'in_progress' and lease_expires_at > $1
           and lease_expires_at < {DB_NOW_MS} + $2"
    );
    let renew = sqlx::query(&sql)
        .bind(live_at_ms)
        .bind(options.lease_grace_ms)
        .execute(conn);
    match tokio::time::timeout(options.timeout * 5, renew).await {
        Ok(Ok(done)) => Ok(done.rows_affected()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("renewing leases took too long".into()),
    }
}
