//! Prometheus metrics: the `metrics` facade at each measuring point (one line, no plumbing
//! through the store) and its Prometheus exporter rendering the text format at `/metrics`.
//!
//! What is measured, and where:
//! - `huddle_http_requests_total{method,route,status}` and
//!   `huddle_http_request_duration_seconds{method,route}` — `http/request_metrics.rs`, a layer
//!   on the router;
//!   `route` is the matched route template (`/v1/teams/{team}/tasks`), never the raw path, and
//!   `unmatched` for anything no route took, so label values stay few;
//! - `huddle_http_errors_total{code}` — every API error answered, by its code (rate-limited,
//!   refused, …), counted where errors become responses (and for MCP tool errors);
//! - `huddle_writer_batch_size`, `huddle_writer_commit_seconds` — per write batch: the SQLite
//!   writer's, or a PostgreSQL team's group commit;
//! - `huddle_writer_wait_seconds{kind}`, `huddle_writer_job_seconds{kind}` — per SQLite write
//!   job: its time in the writer's queue and its run, `kind` `heavy` for a team whose jobs run
//!   alone (`store/sqlite/fair_queue.rs`), `store` for a store-wide job, else `light`;
//! - `huddle_tasks{team,status}`, `huddle_team_edges`, `huddle_team_messages`,
//!   `huddle_team_storage_bytes` (`{team}`) — the store's maintained per-team counters, read at
//!   scrape time and written by `http/scrape.rs` (not registered here, so a deleted team's
//!   series disappear);
//! - `huddle_claims_known_empty_total` — claims answered empty without the SQLite writer;
//! - `huddle_claims_handed_over_total` — waiting claimers served inside the SQLite write that
//!   made their task ready (`store/sqlite/writer/handoff.rs`);
//! - `huddle_claims_undelivered_total` — tasks claimed for a client that left before the answer
//!   (disconnected, timed out or cancelled), released at once without using an attempt;
//! - `huddle_writer_unsent` — team writes not yet handed to the SQLite writer;
//! - `huddle_long_polls_waiting{kind}` — claims and inbox reads waiting now;
//! - `huddle_reads_waiting_for_share` — reads waiting because their team holds its whole share
//!   of the read connections (`store/read_shares.rs`); 0 from start-up;
//! - `huddle_leases_expired_total`, `huddle_messages_posted_total`, `huddle_open_streams`;
//! - `huddle_spend_reservations_total{outcome}` (`granted`, `refused` by the budget),
//!   `huddle_spend_tokens_total{kind}` (`prompt`, `completion`) and
//!   `huddle_spend_cost_micros_total` — model calls reserved and settled (`http/spend.rs`);
//! - `huddle_team_model_calls`, `huddle_team_model_prompt_tokens`,
//!   `huddle_team_model_completion_tokens`, `huddle_team_model_cost_micros` (`{team}`) — each
//!   team's spending in all, read at scrape time from the ledger's daily totals
//!   (`http/scrape.rs`);
//! - `huddle_replicas_live` — the replicas this one shares the limits with, itself included.
//!
//! The recorder is process-wide (the facade's design): daemons sharing a process (tests) share
//! counters. If a program embedding the daemon installed a recorder of its own first, ours is
//! not installed and `/metrics` shows only the scrape-time gauges' absence — nothing breaks.

use metrics::{
    counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram, Histogram,
};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const SECONDS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];
const BATCH: [f64; 10] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0];

/// The process's exporter, installed on first use.
pub fn handle() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), &SECONDS)
            .and_then(|b| b.set_buckets_for_metric(Matcher::Suffix("_batch_size".into()), &BATCH))
            .expect("bucket lists are not empty")
            .build_recorder();
        let handle = recorder.handle();
        if metrics::set_global_recorder(recorder).is_err() {
            tracing::warn!("another metrics recorder is installed; /metrics will be sparse");
        }
        describe();
        handle
    })
}

fn describe() {
    describe_counter!("huddle_http_requests_total", "HTTP requests answered");
    describe_histogram!(
        "huddle_http_request_duration_seconds",
        metrics::Unit::Seconds,
        "time to answer (for streams: to start answering)"
    );
    describe_counter!("huddle_http_errors_total", "API errors answered, by code");
    describe_histogram!(
        "huddle_writer_batch_size",
        "write jobs committed per transaction"
    );
    describe_histogram!(
        "huddle_writer_commit_seconds",
        metrics::Unit::Seconds,
        "time to commit one batch"
    );
    describe_histogram!(
        "huddle_writer_wait_seconds",
        metrics::Unit::Seconds,
        "time a SQLite write job waited for the writer (kind: heavy, light, store)"
    );
    describe_histogram!(
        "huddle_writer_job_seconds",
        metrics::Unit::Seconds,
        "time a SQLite write job ran on the writer, before its batch's commit (kind: heavy, light, store)"
    );
    describe_counter!(
        "huddle_leases_expired_total",
        "expired leases returned by the sweeper"
    );
    describe_counter!("huddle_messages_posted_total", "messages stored");
    describe_counter!(
        "huddle_spend_reservations_total",
        "model calls reserved, by outcome (granted, refused by the budget)"
    );
    describe_counter!(
        "huddle_spend_tokens_total",
        "tokens of settled model calls, by kind"
    );
    describe_counter!(
        "huddle_spend_cost_micros_total",
        "cost of settled model calls, in micro-units"
    );
    describe_counter!(
        "huddle_claims_known_empty_total",
        "claims answered empty without a write: their searches were known to find nothing (SQLite)"
    );
    describe_counter!(
        "huddle_claims_handed_over_total",
        "waiting claimers served inside the write that made their task ready (SQLite)"
    );
    describe_counter!(
        "huddle_claims_undelivered_total",
        "tasks claimed for a client that left before the answer, released without an attempt"
    );
    describe_gauge!("huddle_open_streams", "SSE streams open now");
    gauge!("huddle_exports_spooling").set(0.0);
    describe_gauge!(
        "huddle_exports_spooling",
        "team exports being written to their spool file now (the database snapshot is open only meanwhile)"
    );
    describe_counter!(
        "huddle_export_spooled_bytes_total",
        "bytes of team exports spooled to the data directory before being sent"
    );
    describe_gauge!(
        "huddle_writer_unsent",
        "team writes not yet in the SQLite writer's queue (most wait for a slot behind their own team's backlog)"
    );
    describe_gauge!(
        "huddle_replicas_live",
        "replicas sharing the per-token and per-team limits, this one included"
    );
    // Present from the start, so an alert on it sees 0 rather than no data.
    gauge!("huddle_reads_waiting_for_share").set(0.0);
    describe_gauge!(
        "huddle_reads_waiting_for_share",
        "reads waiting now because their team holds its whole share of the read connections ([limits] max_reads_per_team)"
    );
    describe_gauge!(
        "huddle_long_polls_waiting",
        "claims and inbox reads waiting now (kind: claim, inbox); ends when the client leaves"
    );
}

/// Drains histogram samples into their buckets now and then, so memory stays bounded when
/// nobody scrapes.
pub async fn upkeep(shutdown: CancellationToken) {
    let mut tick = tokio::time::interval(Duration::from_secs(5));
    loop {
        tokio::select! {
            _ = tick.tick() => handle().run_upkeep(),
            _ = shutdown.cancelled() => return,
        }
    }
}

/// An API error answered.
pub fn error_answered(code: &'static str) {
    counter!("huddle_http_errors_total", "code" => code).increment(1);
}

/// A write batch committed (or not): its size and the commit's duration.
pub fn writer_batch(jobs: usize, commit: Duration) {
    let writer = WriterHistograms::get();
    writer.batch_size.record(jobs as f64);
    writer.commit.record(commit);
}

/// A write job run: how long it waited in the writer's queue (from being sent to starting) and
/// how long it ran, by kind: `heavy` (a team whose jobs run alone, `fair_queue::HEAVY`),
/// `light` (another team's), `store` (a store-wide job, which waits for every job sent before
/// it).
pub fn writer_job(kind: WriterJob, waited: Duration, ran: Duration) {
    let writer = WriterHistograms::get();
    writer.wait[kind as usize].record(waited);
    writer.job[kind as usize].record(ran);
}

/// The kind of a SQLite write job, the `kind` label of its histograms.
#[derive(Clone, Copy)]
pub enum WriterJob {
    Heavy,
    Light,
    Store,
}

impl WriterJob {
    const ALL: [WriterJob; 3] = [WriterJob::Heavy, WriterJob::Light, WriterJob::Store];

    fn label(self) -> &'static str {
        match self {
            WriterJob::Heavy => "heavy",
            WriterJob::Light => "light",
            WriterJob::Store => "store",
        }
    }
}

/// The SQLite writer's histograms, looked up once. The facade's macros hash the name and labels
/// and search the registry on every call: once per job and batch on the writer thread, where
/// every microsecond holds up the next batch.
struct WriterHistograms {
    wait: [Histogram; 3],
    job: [Histogram; 3],
    batch_size: Histogram,
    commit: Histogram,
}

impl WriterHistograms {
    fn get() -> &'static WriterHistograms {
        static HISTOGRAMS: OnceLock<WriterHistograms> = OnceLock::new();
        HISTOGRAMS.get_or_init(|| {
            // The handles belong to the recorder installed when they are made: ours first.
            handle();
            WriterHistograms {
                wait: WriterJob::ALL
                    .map(|k| histogram!("huddle_writer_wait_seconds", "kind" => k.label())),
                job: WriterJob::ALL
                    .map(|k| histogram!("huddle_writer_job_seconds", "kind" => k.label())),
                batch_size: histogram!("huddle_writer_batch_size"),
                commit: histogram!("huddle_writer_commit_seconds"),
            }
        })
    }
}

pub fn leases_expired(n: usize) {
    counter!("huddle_leases_expired_total").increment(n as u64);
}

/// A claim answered empty from what earlier claims proved, without the writer.
pub fn claim_known_empty() {
    counter!("huddle_claims_known_empty_total").increment(1);
}

/// A waiting claimer served inside the write that made its task ready, in place of a wake
/// and a write of its own (`huddle_claims_handed_over_total`).
pub fn claim_handed_over() {
    counter!("huddle_claims_handed_over_total").increment(1);
}

/// A long poll (`claim`, `inbox`) waiting now, counted in `huddle_long_polls_waiting{kind}`
/// until dropped.
pub struct LongPoll(&'static str);

impl LongPoll {
    pub fn start(kind: &'static str) -> LongPoll {
        gauge!("huddle_long_polls_waiting", "kind" => kind).increment(1.0);
        LongPoll(kind)
    }
}

impl Drop for LongPoll {
    fn drop(&mut self) {
        gauge!("huddle_long_polls_waiting", "kind" => self.0).decrement(1.0);
    }
}

/// A read waiting for a place in its team's share of the read connections, counted in
/// `huddle_reads_waiting_for_share` until dropped.
pub struct ReadShareWait;

impl ReadShareWait {
    pub fn start() -> ReadShareWait {
        gauge!("huddle_reads_waiting_for_share").increment(1.0);
        ReadShareWait
    }
}

impl Drop for ReadShareWait {
    fn drop(&mut self) {
        gauge!("huddle_reads_waiting_for_share").decrement(1.0);
    }
}

/// Tasks claimed for a client that had left, released again.
pub fn claims_undelivered(n: usize) {
    counter!("huddle_claims_undelivered_total").increment(n as u64);
}

/// A model call reserved (`granted`) or refused by the budget (`refused`).
pub fn spend_reserved(granted: bool) {
    let outcome = if granted { "granted" } else { "refused" };
    counter!("huddle_spend_reservations_total", "outcome" => outcome).increment(1);
}

/// A settled model call's tokens (by kind) and cost. No model or team label: both come from
/// clients, and the per-team totals are at `GET …/spend`.
pub fn spend_settled(call: &huddle_wire::SpendCall) {
    counter!("huddle_spend_tokens_total", "kind" => "prompt").increment(call.prompt_tokens);
    counter!("huddle_spend_tokens_total", "kind" => "completion").increment(call.completion_tokens);
    counter!("huddle_spend_cost_micros_total").increment(call.cost_micros);
}

pub fn messages_posted(n: usize) {
    counter!("huddle_messages_posted_total").increment(n as u64);
}

/// Replicas sharing the per-token and per-team limits, this one included (`replicas.rs`).
pub fn replicas_live(n: usize) {
    gauge!("huddle_replicas_live").set(n as f64);
}

/// A team write arrived (`1`) or was handed to the SQLite writer (`-1`).
pub fn writer_unsent(delta: f64) {
    gauge!("huddle_writer_unsent").increment(delta);
}

/// A stream opened (`1`) or closed (`-1`).
pub fn stream_opened(delta: f64) {
    gauge!("huddle_open_streams").increment(delta);
}

/// A team export spooling now (`huddle_exports_spooling`), until dropped.
pub struct ExportSpooling;

impl ExportSpooling {
    pub fn start() -> ExportSpooling {
        gauge!("huddle_exports_spooling").increment(1.0);
        ExportSpooling
    }
}

impl Drop for ExportSpooling {
    fn drop(&mut self) {
        gauge!("huddle_exports_spooling").decrement(1.0);
    }
}

/// An export of `bytes` was spooled.
pub fn export_spooled(bytes: u64) {
    counter!("huddle_export_spooled_bytes_total").increment(bytes);
}
