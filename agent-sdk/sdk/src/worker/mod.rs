//! The worker runtime: run any [`Handler`] in a loop of long-poll claim → heartbeat in the
//! background → handle → complete or fail → repeat.
//!
//! - **Claims** long-poll (`wait`, 20 s by default) for tasks whose id starts with one of the
//!   worker's prefixes — the role's defaults (`TEST` for testers, `QARUN` for executors) unless
//!   set with [`Worker::prefixes`] or [`Worker::role`]. With [`Worker::project`] it takes only
//!   tasks of that project (their metadata `project`) and tasks that name none (with
//!   [`Worker::strict_project`], only that project's), so workers on different checkouts
//!   never take each other's tasks.
//! - **Heartbeats** run in the background every third of the lease. If the daemon says the lease
//!   is gone, or cannot be reached before it runs out, the handler's [`TaskContext::cancelled`]
//!   fires and its result is dropped: another worker may be doing the task by then.
//! - **Results**: `Ok(value)` completes the task with `value` as its result; `Err(e)` fails
//!   this attempt with `e`'s text as the reason — the task goes back to the queue while it has
//!   attempts left — and `Err(FinalFailure::new(..).into())` fails the task for good ([`FinalFailure`]);
//!   a panic fails the attempt with the panic message, and the worker goes on. Completions are retried while the daemon is unreachable; a completion whose answer was
//!   lost is recognised on retry rather than reported as a conflict.
//! - **Shutdown** (SIGINT/SIGTERM with [`Worker::run`], or the token given to
//!   [`Worker::run_until`]): stop claiming, let the current task finish within the grace period,
//!   otherwise cancel it and release it back to the queue; then return.
//! - **Daemon unreachable**: back off (up to 5 s between tries) and keep trying, logging once
//!   when the daemon goes away and once when it is back, never spinning.
//!
//! # Example
//!
//! ```no_run
//! use huddle_sdk::wire::Role;
//! use huddle_sdk::{Client, HandlerResult, TaskContext, Worker};
//! use huddle_sdk::wire::Task;
//!
//! async fn count_words(task: Task, _ctx: TaskContext) -> HandlerResult {
//!     let words = task.description.split_whitespace().count();
//!     Ok(serde_json::json!({ "words": words }))
//! }
//!
//! # async fn demo() -> Result<(), huddle_sdk::Error> {
//! let client = Client::builder("http://127.0.0.1:7700")
//!     .token("a tester's token")
//!     .team("qa")
//!     .build()?;
//! let stats = Worker::new(client, count_words).role(Role::Tester).run().await?;
//! println!("done: {} completed, {} failed", stats.completed, stats.failed);
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

mod connectivity;
mod handler;
mod lease;
mod signals;
mod task_run;

pub use handler::{FinalFailure, Handler, HandlerError, HandlerResult, ReleaseTask, TaskContext};
pub use signals::shutdown_on_signals;

use crate::client::{Backoff, Client, Error};
use crate::wire::{ClaimRequest, Role};
use connectivity::Connectivity;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Runs a [`Handler`] over claimed tasks until told to stop. See the [module docs](self).
pub struct Worker<H> {
    client: Client,
    handler: Arc<H>,
    /// `None`: let the daemon use the agent's role defaults.
    prefixes: Option<Vec<String>>,
    /// `None`: tasks of any project.
    project: Option<String>,
    strict_project: bool,
    /// The model the handler calls, declared on every claim (`None`: it calls none).
    model: Option<String>,
    lease: Duration,
    wait: Duration,
    grace: Duration,
    max_backoff: Duration,
}

/// What a worker did before it stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkerStats {
    /// Tasks completed with the handler's result.
    pub completed: u64,
    /// Tasks failed with the handler's error or panic.
    pub failed: u64,
    /// Tasks whose lease was lost (or whose completion the daemon refused); another worker may
    /// have done them.
    pub lost: u64,
    /// Tasks given back to the queue on shutdown.
    pub released: u64,
}

/// How one task ended for this worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Completed,
    Failed,
    Lost,
    Released,
}

impl WorkerStats {
    fn record(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Completed => self.completed += 1,
            Outcome::Failed => self.failed += 1,
            Outcome::Lost => self.lost += 1,
            Outcome::Released => self.released += 1,
        }
    }
}

impl<H: Handler> Worker<H> {
    /// A worker for the agent and team of `client`, running `handler` for each task.
    /// Defaults: the role's prefixes, 30 s lease, 20 s long-poll wait, 30 s shutdown grace.
    pub fn new(client: Client, handler: H) -> Worker<H> {
        Worker {
            client,
            handler: Arc::new(handler),
            prefixes: None,
            project: None,
            strict_project: false,
            model: None,
            lease: Duration::from_secs(30),
            wait: Duration::from_secs(20),
            grace: Duration::from_secs(30),
            max_backoff: Duration::from_secs(5),
        }
    }

    /// Claims tasks whose id starts with one of `prefixes` (`TEST`, `QARUN`…).
    pub fn prefixes<I, S>(mut self, prefixes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let prefixes: Vec<String> = prefixes.into_iter().map(Into::into).collect();
        self.prefixes = (!prefixes.is_empty()).then_some(prefixes);
        self
    }

    /// Claims the default prefixes of `role` (tester: `TEST`, executor: `QARUN`).
    pub fn role(self, role: Role) -> Self {
        self.prefixes(role.default_prefixes().iter().copied())
    }

    /// Claims only tasks of `project` (metadata `project`, as the test history names the
    /// checkout: see [`crate::roles::checkout_project`]) and tasks that name no project.
    pub fn project(mut self, project: impl Into<String>) -> Self {
        self.project = Some(project.into());
        self
    }

    /// Declares that the handler calls `model`: while the team's model budget is spent, the
    /// daemon gives this worker no `TEST`/`QARUN` task (409 `budget_exceeded`, which the
    /// worker waits out, backing off).
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// With [`Worker::project`]: leave tasks that name no project to other workers.
    pub fn strict_project(mut self, strict: bool) -> Self {
        self.strict_project = strict;
        self
    }

    /// The lease asked for on claim and on every heartbeat (heartbeats go every third of it).
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// How long one claim waits for a task to become ready (long poll).
    pub fn wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// How long a running task may take to finish after shutdown was asked for.
    pub fn grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// The longest pause between tries while the daemon is unreachable (default 5 s).
    pub fn max_backoff(mut self, max: Duration) -> Self {
        self.max_backoff = max;
        self
    }

    /// Runs until SIGINT or SIGTERM, then shuts down gracefully (see the module docs).
    pub async fn run(self) -> Result<WorkerStats, Error> {
        let stop = shutdown_on_signals();
        self.run_until(stop).await
    }

    /// Runs until `stop` is cancelled, then shuts down gracefully. Returns an error only for
    /// problems retrying cannot fix: a bad token, a role that may not claim, bad prefixes.
    pub async fn run_until(self, stop: CancellationToken) -> Result<WorkerStats, Error> {
        let connectivity = Arc::new(Connectivity::default());
        let mut backoff = Backoff::new(Duration::from_millis(100), self.max_backoff);
        let mut stats = WorkerStats::default();
        let request = ClaimRequest {
            prefixes: self.prefixes.clone(),
            wait_ms: Some(self.wait.as_millis() as u64),
            lease_ms: Some(self.lease.as_millis() as u64),
            max: None,
            project: self.project.clone(),
            strict_project: self.strict_project && self.project.is_some(),
            model: self.model.clone(),
        };
        tracing::info!(
            "worker started: claiming {} in team {}{}",
            self.prefixes
                .as_ref()
                .map_or("the role's default prefixes".to_string(), |p| p.join(", ")),
            self.client.team().unwrap_or("?"),
            self.project
                .as_ref()
                .map_or(String::new(), |p| format!(" for project {p}")),
        );
        while !stop.is_cancelled() {
            // A claim that answered wins over a stop that came at the same moment, so a task
            // the daemon just handed us is run (within the grace period) rather than dropped.
            let claimed = tokio::select! {
                biased;
                r = self.client.claim(&request) => r,
                _ = stop.cancelled() => break,
            };
            match claimed {
                Ok(Some(task)) => {
                    connectivity.up();
                    backoff.reset();
                    let attempt = task
                        .traceparent
                        .as_deref()
                        .and_then(huddle_telemetry::TraceParent::parse);
                    let outcome = huddle_telemetry::in_attempt(
                        attempt,
                        self.run_task(task, &connectivity, &stop),
                    )
                    .await;
                    stats.record(outcome);
                }
                Ok(None) => {
                    connectivity.up();
                    if self.wait < Duration::from_millis(100) {
                        // Not long-polling: pace the loop instead of hammering the daemon.
                        pause(backoff.next_delay(), &stop).await;
                    } else {
                        backoff.reset();
                    }
                }
                Err(e) if e.is_transient() => {
                    connectivity.down(&e);
                    pause(backoff.next_delay(), &stop).await;
                }
                Err(e) if e.is_budget_exceeded() => {
                    // The budget may be raised at any time: wait, then ask again.
                    connectivity.up();
                    tracing::info!("no model-calling task while the model budget is spent");
                    pause(backoff.next_delay(), &stop).await;
                }
                Err(e) => {
                    tracing::error!("cannot claim tasks: {e}");
                    return Err(e);
                }
            }
        }
        tracing::info!(
            "worker stopped: {} completed, {} failed, {} lost, {} released",
            stats.completed,
            stats.failed,
            stats.lost,
            stats.released
        );
        Ok(stats)
    }
}

/// Sleeps for `d`, or less if `stop` fires.
async fn pause(d: Duration, stop: &CancellationToken) {
    tokio::select! {
        _ = tokio::time::sleep(d) => {}
        _ = stop.cancelled() => {}
    }
}
