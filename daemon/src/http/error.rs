//! The HTTP layer's one error type and the single place where store errors become statuses.

use crate::store::StoreError;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use huddle_wire::codes;
use huddle_wire::{ErrorBody, ErrorInfo};
use serde_json::{json, Value};

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub details: Value,
    /// Seconds for a `Retry-After` header (429, 503).
    pub retry_after: Option<u64>,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            details: Value::Null,
            retry_after: None,
        }
    }

    pub fn with_retry_after(mut self, secs: u64) -> Self {
        self.retry_after = Some(secs);
        self
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }

    /// 400 naming the offending field.
    pub fn bad_request(field: &str, message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, codes::INVALID_FIELD, message)
            .with_details(json!({ "field": field }))
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::UNAUTHORIZED, codes::UNAUTHORIZED, message)
    }

    /// A long poll whose token was revoked or rotated while it waited.
    pub fn revoked_while_waiting() -> Self {
        ApiError::unauthorized("this token was revoked or rotated while the request waited")
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::FORBIDDEN, codes::FORBIDDEN, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, codes::NOT_FOUND, message)
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Invalid {
                field,
                message,
                details,
            } => {
                let mut details = if details.is_object() {
                    details
                } else {
                    json!({})
                };
                details["field"] = Value::String(field);
                ApiError::new(StatusCode::BAD_REQUEST, codes::INVALID_FIELD, message)
                    .with_details(details)
            }
            StoreError::NotFound { what } => ApiError::not_found(format!("{what} not found")),
            StoreError::Conflict {
                code,
                message,
                details,
            } => ApiError::new(StatusCode::CONFLICT, code, message).with_details(details),
            StoreError::Forbidden { code, message } => {
                ApiError::new(StatusCode::FORBIDDEN, code, message)
            }
            StoreError::StaleVersion { expected, current } => ApiError::new(
                StatusCode::PRECONDITION_FAILED,
                codes::STALE_VERSION,
                format!("If-Match names version {expected} but the current version is {current}"),
            )
            .with_details(json!({ "currentVersion": current })),
            StoreError::TooLarge { message } => {
                ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, codes::TOO_LARGE, message)
            }
            StoreError::Unavailable(detail) => {
                tracing::error!(%detail, "store unavailable");
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    codes::STORE_UNAVAILABLE,
                    "the store cannot take this request right now (unreachable, disk full, read-only or shutting down); retry later",
                )
                .with_retry_after(1)
            }
            StoreError::TeamReadsBusy(message) => {
                tracing::warn!(%message, "a team's read waited too long for its share");
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    codes::TEAM_READS_BUSY,
                    message,
                )
                .with_retry_after(1)
            }
            StoreError::Internal(detail) => {
                tracing::error!(%detail, "internal store error");
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    codes::INTERNAL,
                    "internal error; see the daemon log",
                )
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        crate::metrics::error_answered(self.code);
        let (status, retry_after) = (self.status, self.retry_after);
        let body = ErrorBody {
            error: ErrorInfo {
                code: self.code.to_string(),
                message: self.message,
                details: self.details,
            },
        };
        let mut response = (self.status, axum::Json(body)).into_response();
        if let Some(secs) = retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        if status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}
