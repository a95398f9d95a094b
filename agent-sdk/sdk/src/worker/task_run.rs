//! One claimed task from start to end: heartbeat, run the handler (catching panics), then
//! complete, fail or release it.

use super::connectivity::Connectivity;
use super::handler::{FinalFailure, Handler, HandlerResult, ReleaseTask, TaskContext};
use super::lease::LeaseKeeper;
use super::{Outcome, Worker};
use crate::client::{Backoff, Error};
use crate::wire::{Task, TaskStatus};
use std::any::Any;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::{JoinError, JoinHandle};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Failure reasons are cut to this many characters (the daemon's limit is far larger).
const MAX_REASON_CHARS: usize = 4000;

/// How the handler's part ended.
enum Ending {
    Finished(Result<HandlerResult, JoinError>),
    LeaseLost,
    GraceOver,
}

/// What to tell the daemon.
enum Finish {
    Complete(serde_json::Value),
    /// `final_`: fail the task for good rather than this attempt ([`FinalFailure`]).
    /// `result`: kept as the task's result ([`FinalFailure::with_result`]).
    Fail {
        reason: String,
        final_: bool,
        result: Option<serde_json::Value>,
    },
}

impl Finish {
    /// A handler's error: final when it is a [`FinalFailure`], this attempt only otherwise.
    fn from_error(e: &(dyn std::error::Error + 'static)) -> Finish {
        let final_failure = e.downcast_ref::<FinalFailure>();
        Finish::Fail {
            reason: e.to_string(),
            final_: final_failure.is_some(),
            result: final_failure.and_then(|f| f.result().cloned()),
        }
    }
}

impl<H: Handler> Worker<H> {
    pub(crate) async fn run_task(
        &self,
        task: Task,
        connectivity: &Arc<Connectivity>,
        stop: &CancellationToken,
    ) -> Outcome {
        let id = task.id.clone();
        let holder = task.claimed_by.clone();
        tracing::info!(task = %id, attempt = task.attempts + 1, "claimed {id}: {}", task.subject);
        let cancel = CancellationToken::new();
        let workspace = Arc::new(super::handler::WorkspaceSlot::default());
        let keeper = LeaseKeeper::start(
            self.client.clone(),
            id.clone(),
            self.lease,
            cancel.clone(),
            connectivity.clone(),
            workspace.clone(),
        );
        let after_close = Arc::new(std::sync::Mutex::new(Vec::new()));
        let ctx = TaskContext {
            client: self.client.clone(),
            cancel: cancel.clone(),
            after_close: after_close.clone(),
            workspace,
        };
        let handler = self.handler.clone();
        let started = std::time::SystemTime::now();
        let attempt = huddle_telemetry::current();
        // The handler runs as a task of its own: the attempt goes with it.
        let mut job: JoinHandle<HandlerResult> =
            tokio::spawn(huddle_telemetry::in_attempt(attempt, async move {
                handler.handle(task, ctx).await
            }));

        let ending = tokio::select! {
            r = &mut job => Ending::Finished(r),
            _ = keeper.lost().cancelled() => Ending::LeaseLost,
            _ = stop.cancelled() => {
                tracing::info!(task = %id, "stopping: letting {id} finish (grace {:?})", self.grace);
                tokio::select! {
                    r = &mut job => Ending::Finished(r),
                    _ = keeper.lost().cancelled() => Ending::LeaseLost,
                    _ = tokio::time::sleep(self.grace) => Ending::GraceOver,
                }
            }
        };

        let outcome = match ending {
            Ending::LeaseLost => {
                // The keeper already cancelled the handler; give it the grace period to stop.
                if tokio::time::timeout(self.grace, &mut job).await.is_err() {
                    job.abort();
                }
                tracing::warn!(task = %id, "gave up {id}: its lease was lost; the result is dropped");
                Outcome::Lost
            }
            Ending::GraceOver => {
                cancel.cancel();
                job.abort();
                let _ = job.await;
                self.release(&id).await
            }
            Ending::Finished(Ok(Err(e))) if e.downcast_ref::<ReleaseTask>().is_some() => {
                let note = e.downcast_ref::<ReleaseTask>().map(ReleaseTask::note);
                self.release_for(&id, note.unwrap_or_default()).await
            }
            Ending::Finished(joined) => {
                let finish = match joined {
                    Ok(Ok(value)) => Finish::Complete(value),
                    Ok(Err(e)) => Finish::from_error(e.as_ref()),
                    // A panic or an abort: another attempt may fare better.
                    Err(e) => Finish::Fail {
                        reason: join_failure(e),
                        final_: false,
                        result: None,
                    },
                };
                let outcome = self
                    .finish(&id, holder.as_deref(), finish, connectivity, stop)
                    .await;
                if matches!(outcome, Outcome::Completed | Outcome::Failed) {
                    let queued =
                        std::mem::take(&mut *after_close.lock().unwrap_or_else(|e| e.into_inner()));
                    for message in queued {
                        if let Err(e) = self.client.post_message(&message).await {
                            tracing::warn!(task = %id, "could not post {} for {id}: {e}", message.kind);
                        }
                    }
                }
                outcome
            }
        };
        keeper.stop().await;
        huddle_telemetry::record_in_attempt(
            "worker.attempt",
            started,
            vec![
                huddle_telemetry::KeyValue::new("huddle.task.id", id.clone()),
                huddle_telemetry::KeyValue::new("huddle.outcome", format!("{outcome:?}")),
            ],
        );
        outcome
    }

    /// Gives the task back to the queue after the grace period ran out.
    async fn release(&self, id: &str) -> Outcome {
        match self.client.release(id).await {
            Ok(_) => {
                tracing::info!(task = %id, "released {id}: it did not finish within the grace period");
                Outcome::Released
            }
            Err(e) => {
                tracing::warn!(task = %id, "could not release {id} ({e}); its lease will expire");
                Outcome::Lost
            }
        }
    }

    /// Gives the task back because the handler asked to (a [`ReleaseTask`]), with its note.
    async fn release_for(&self, id: &str, note: &str) -> Outcome {
        match self.client.release_with_note(id, Some(note)).await {
            Ok(_) => {
                tracing::info!(task = %id, "released {id}: {note}");
                Outcome::Released
            }
            Err(e) => {
                tracing::warn!(task = %id, "could not release {id} ({e}); its lease will expire");
                Outcome::Lost
            }
        }
    }

    /// Completes or fails `id`, retrying while the daemon is unreachable (for up to the grace
    /// period once stopping). A retry that finds the task already closed checks whether our
    /// own earlier attempt did it.
    async fn finish(
        &self,
        id: &str,
        holder: Option<&str>,
        mut finish: Finish,
        connectivity: &Connectivity,
        stop: &CancellationToken,
    ) -> Outcome {
        let mut backoff = Backoff::new(Duration::from_millis(100), self.max_backoff);
        let mut stopping_since: Option<Instant> = None;
        loop {
            let (answer, wanted) = match &finish {
                Finish::Complete(v) => {
                    let result = (!v.is_null()).then(|| v.clone());
                    (
                        self.client.complete(id, result).await,
                        TaskStatus::Completed,
                    )
                }
                Finish::Fail {
                    reason,
                    final_,
                    result,
                } => {
                    let reason = cut(reason);
                    let answer = self
                        .client
                        .fail_with(id, &reason, *final_, result.clone())
                        .await;
                    (answer, TaskStatus::Failed)
                }
            };
            match answer {
                Ok(_) => {
                    connectivity.up();
                    return self.finished(id, &finish);
                }
                Err(e) if e.is_transient() => {
                    connectivity.down(&e);
                    if stop.is_cancelled() {
                        let since = *stopping_since.get_or_insert_with(Instant::now);
                        if since.elapsed() >= self.grace {
                            tracing::warn!(task = %id, "could not report {id} before stopping: {e}");
                            return Outcome::Lost;
                        }
                    }
                    tokio::time::sleep(backoff.next_delay()).await;
                }
                Err(e) if e.code() == Some(crate::wire::codes::TASK_CLOSED) => {
                    return match self.client.get_task(id).await {
                        Ok(t) if t.status == wanted && t.claimed_by.as_deref() == holder => {
                            self.finished(id, &finish)
                        }
                        _ => {
                            tracing::warn!(task = %id, "{id} was closed by someone else: {e}");
                            Outcome::Lost
                        }
                    };
                }
                Err(e) if matches!(finish, Finish::Complete(_)) && rejects_result(&e) => {
                    // The same result would be refused again: no retry can help.
                    finish = Finish::Fail {
                        reason: format!("the daemon refused the result: {e}"),
                        final_: true,
                        result: None,
                    };
                }
                Err(e) => {
                    tracing::warn!(task = %id, "could not report {id}: {e}");
                    return Outcome::Lost;
                }
            }
        }
    }

    fn finished(&self, id: &str, finish: &Finish) -> Outcome {
        match finish {
            Finish::Complete(_) => {
                tracing::info!(task = %id, "completed {id}");
                Outcome::Completed
            }
            Finish::Fail { reason, final_, .. } => {
                let how = if *final_ { "for good" } else { "this attempt" };
                tracing::info!(task = %id, "failed {id} ({how}): {}", first_line(reason));
                Outcome::Failed
            }
        }
    }
}

/// A result the daemon will never take (invalid or too large), as opposed to a lost claim.
fn rejects_result(e: &Error) -> bool {
    matches!(e.status(), Some(400) | Some(413))
}

/// The failure reason for a handler that panicked (or was aborted).
fn join_failure(e: JoinError) -> String {
    if e.is_panic() {
        format!("handler panicked: {}", panic_message(e.into_panic()))
    } else {
        "handler was cancelled".to_string()
    }
}

fn panic_message(payload: Box<dyn Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a non-string panic payload)".to_string()
    }
}

fn cut(reason: &str) -> String {
    let reason = if reason.trim().is_empty() {
        "failed (no reason given)"
    } else {
        reason
    };
    reason.chars().take(MAX_REASON_CHARS).collect()
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}
