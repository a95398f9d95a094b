//! What a worker runs for each task: the [`Handler`] trait and the [`TaskContext`] it gets.

use crate::client::Client;
use crate::wire::{PostMessage, Task, WorkspaceNote};
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

/// A handler's error; its text becomes the task's `failureReason`. Anything that implements
/// `std::error::Error`, and plain strings (`Err("no tests found".into())`), convert into it.
/// Such an error fails this attempt only: the task is tried again while it has attempts left.
/// A [`FinalFailure`] fails the task for good.
pub type HandlerError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A handler error that no retry can fix (the task is wrong, the project cannot be tested):
/// the task becomes `failed` now and its dependents stay blocked, whatever attempts it has left.
///
/// `Err(FinalFailure::new("no test framework detected").into())`; with
/// [`FinalFailure::with_result`] the task keeps a `result` too (what was run and changed).
#[derive(Debug, Clone, PartialEq)]
pub struct FinalFailure {
    reason: String,
    result: Option<serde_json::Value>,
}

impl FinalFailure {
    /// A final failure with this reason.
    pub fn new(reason: impl Into<String>) -> FinalFailure {
        FinalFailure {
            reason: reason.into(),
            result: None,
        }
    }

    /// The same failure, stored with this JSON as the task's `result`.
    pub fn with_result(self, result: serde_json::Value) -> FinalFailure {
        FinalFailure {
            result: Some(result),
            ..self
        }
    }

    /// Why the task failed (its `failureReason`).
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The task's `result`, if one was given.
    pub fn result(&self) -> Option<&serde_json::Value> {
        self.result.as_ref()
    }
}

impl std::fmt::Display for FinalFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for FinalFailure {}

/// A handler error that gives the task back to the queue instead of failing it: no attempt
/// is used, and `note` (why) goes to the coordinators with the release. The built-in roles
/// return it when the team's model budget refuses their next call (`budget_exceeded`), so the
/// task waits, ready, until the budget is raised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseTask {
    note: String,
}

impl ReleaseTask {
    /// A release with this note.
    pub fn new(note: impl Into<String>) -> ReleaseTask {
        ReleaseTask { note: note.into() }
    }

    /// Why the task is given back.
    pub fn note(&self) -> &str {
        &self.note
    }
}

impl std::fmt::Display for ReleaseTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "released: {}", self.note)
    }
}

impl std::error::Error for ReleaseTask {}

/// What a handler returns: the task's result (any JSON; `null` for none) or why it failed.
pub type HandlerResult = Result<serde_json::Value, HandlerError>;

/// The work a [`crate::Worker`] does for each claimed task.
///
/// Any `Fn(Task, TaskContext) -> impl Future<Output = HandlerResult>` closure is a handler; implement
/// the trait on a struct when the handler has configuration or state. A handler should return
/// soon after [`TaskContext::cancelled`] fires (the lease was lost or the worker is stopping):
/// whatever it returns then is dropped. A panic fails the task with the panic message and the
/// worker goes on with the next one.
pub trait Handler: Send + Sync + 'static {
    /// Does the work of `task`.
    fn handle(&self, task: Task, ctx: TaskContext) -> impl Future<Output = HandlerResult> + Send;
}

impl<F, Fut> Handler for F
where
    F: Fn(Task, TaskContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HandlerResult> + Send,
{
    fn handle(&self, task: Task, ctx: TaskContext) -> impl Future<Output = HandlerResult> + Send {
        self(task, ctx)
    }
}

/// What a handler may use besides the task: a client to post messages or read memory, and a
/// cancellation signal.
#[derive(Clone, Debug)]
pub struct TaskContext {
    pub(crate) client: Client,
    pub(crate) cancel: CancellationToken,
    /// Messages to post once the task is completed or failed.
    pub(crate) after_close: Arc<Mutex<Vec<PostMessage>>>,
    /// Where the task is worked on, sent with the heartbeats (the next one at once).
    pub(crate) workspace: Arc<WorkspaceSlot>,
}

/// The workspace the heartbeats report, and a wake-up for the heartbeat loop.
#[derive(Debug, Default)]
pub(crate) struct WorkspaceSlot {
    pub note: Mutex<Option<WorkspaceNote>>,
    pub changed: tokio::sync::Notify,
}

impl TaskContext {
    /// Posts `message` right after the worker completes or fails the task (not when the task
    /// was lost or released), so whoever follows the bus never sees a verdict before the task
    /// is closed.
    pub fn post_after_close(&self, message: PostMessage) {
        self.after_close
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(message);
    }

    /// Says where the task is worked on: the next heartbeat (sent now) carries it, and the
    /// daemon shows it on `/metrics` while the lease holds.
    pub fn set_workspace(&self, note: WorkspaceNote) {
        *self
            .workspace
            .note
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(note);
        self.workspace.changed.notify_one();
    }

    /// A client acting as the worker's agent in the worker's team.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Completes when the handler should stop: the lease on the task was lost (another worker
    /// may take it over) or the worker's shutdown grace period ran out.
    pub fn cancelled(&self) -> WaitForCancellationFuture<'_> {
        self.cancel.cancelled()
    }

    /// Whether [`TaskContext::cancelled`] has fired.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// The cancellation token itself, to hand to code that takes one.
    pub fn token(&self) -> &CancellationToken {
        &self.cancel
    }
}
