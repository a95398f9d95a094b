//! The client's one error type: what the daemon said, or why it could not be asked.

use serde_json::Value;
use std::fmt;

/// An error answer from the daemon: its HTTP status and the `{"error": {code, message, details}}`
/// body every endpoint uses.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// The HTTP status (400, 401, 403, 404, 409, 412, 413, 429, 503…).
    pub status: u16,
    /// The daemon's machine-readable code: `not_found`, `stale_version`, `cycle`, `not_holder`…
    pub code: String,
    /// The daemon's human-readable explanation, naming the field or resource at fault.
    pub message: String,
    /// Structured details (the offending field, the cycle, the current version…), or `null`.
    pub details: Value,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({} {})", self.message, self.status, self.code)
    }
}

/// Everything a [`crate::Client`] call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The daemon answered with an error status; see [`ApiError`] for its code and message.
    #[error("{0}")]
    Api(ApiError),
    /// The daemon could not be reached (refused, reset, timed out), even after the retries the
    /// call is allowed.
    #[error("cannot reach the huddle daemon at {url}: {reason} (after {attempts} attempt{s}); is huddled running?", s = if *attempts == 1 { "" } else { "s" })]
    Unreachable {
        /// The daemon's base URL.
        url: String,
        /// The innermost cause, e.g. `Connection refused (os error 111)`.
        reason: String,
        /// How many times the call was tried.
        attempts: u32,
    },
    /// The daemon answered something this client cannot read (a bug or a version mismatch).
    #[error("unexpected answer from the daemon to {what}: {reason}")]
    Protocol {
        /// The call, such as `GET /v1/teams/qa/tasks`.
        what: String,
        /// What was wrong with the answer.
        reason: String,
    },
    /// A team-scoped call on a client that has no team: give it one with
    /// [`crate::ClientBuilder::team`] or [`crate::Client::with_team`].
    #[error("no team chosen: this call works inside a team, and the client has none")]
    NoTeam,
    /// The client was asked something it cannot send (bad URL, header or body).
    #[error("{0}")]
    Config(String),
}

impl Error {
    /// The daemon's error body, when the daemon answered with one.
    pub fn api(&self) -> Option<&ApiError> {
        match self {
            Error::Api(e) => Some(e),
            _ => None,
        }
    }

    /// The daemon's error code (`not_found`, `stale_version`…), when it answered with one.
    pub fn code(&self) -> Option<&str> {
        self.api().map(|e| e.code.as_str())
    }

    /// The HTTP status, when the daemon answered.
    pub fn status(&self) -> Option<u16> {
        self.api().map(|e| e.status)
    }

    /// Whether waiting and trying again may succeed: the daemon is unreachable, overloaded
    /// (429) or temporarily unable to serve (502, 503, 504).
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Unreachable { .. } => true,
            Error::Api(e) => is_transient_status(e.status),
            Error::Protocol { .. } | Error::NoTeam | Error::Config(_) => false,
        }
    }

    /// 404: the team, task, route or memory pointer does not exist (or belongs to another team).
    pub fn is_not_found(&self) -> bool {
        self.status() == Some(404)
    }

    /// 409: a conflict such as a dependency cycle, a duplicate id, or a task not held by the caller.
    pub fn is_conflict(&self) -> bool {
        self.status() == Some(409)
    }

    /// 412: the `If-Match` version is stale.
    pub fn is_stale(&self) -> bool {
        self.status() == Some(412)
    }
}

/// Statuses worth retrying for a call that is safe to repeat.
pub(crate) fn is_transient_status(status: u16) -> bool {
    matches!(status, 429 | 502 | 503 | 504)
}

/// The innermost, most specific message of an error chain (`Connection refused (os error 111)`
/// rather than `error sending request for url …`).
pub(crate) fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut current = e;
    while let Some(next) = current.source() {
        current = next;
    }
    let text = current.to_string();
    if text.is_empty() {
        e.to_string()
    } else {
        text
    }
}
