//! The store's one error type, and the result every store operation returns.

use serde_json::Value;

pub type StoreResult<T> = Result<T, StoreError>;

/// Everything a store operation can refuse or fail with. The HTTP layer maps each variant to a
/// status in one place (`http::error`); nothing here knows about HTTP.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// The input is wrong; `field` names what, `message` says why.
    #[error("{message}")]
    Invalid {
        field: String,
        message: String,
        details: Value,
    },
    #[error("{what} not found")]
    NotFound { what: String },
    /// A well-formed request that contradicts the current state (duplicate, cycle, not holder…).
    #[error("{message}")]
    Conflict {
        code: &'static str,
        message: String,
        details: Value,
    },
    /// The caller may attempt this kind of action but not on this record (a person-only gate
    /// decided by an agent); `code` says which rule.
    #[error("{message}")]
    Forbidden { code: &'static str, message: String },
    /// `If-Match` named an older version.
    #[error("version {expected} is stale; current version is {current}")]
    StaleVersion { expected: i64, current: i64 },
    #[error("{message}")]
    TooLarge { message: String },
    /// The database cannot take writes or answer (disk full, read-only, closed).
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// The team's reads hold its whole share of the read connections and none came free in
    /// time (`read_shares.rs`).
    #[error("{0}")]
    TeamReadsBusy(String),
    /// A bug or an unexpected database error; its text goes to the log, never to the client.
    #[error("internal store error: {0}")]
    Internal(String),
}

impl StoreError {
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        StoreError::Invalid {
            field: field.to_string(),
            message: message.into(),
            details: Value::Null,
        }
    }

    pub fn not_found(what: impl Into<String>) -> Self {
        StoreError::NotFound { what: what.into() }
    }

    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        StoreError::Conflict {
            code,
            message: message.into(),
            details: Value::Null,
        }
    }
}
