//! The pieces the handlers' `#[utoipa::path]` annotations name: path and header parameters,
//! the reusable error responses (all in the one error shape, [`ErrorBody`]) and the schemas of
//! answers that are one of two shapes. Documentation only: the derive macros read these types
//! and no handler builds them, hence `dead_code`.
#![allow(dead_code)]

use huddle_wire::{ClaimedTasks, ErrorBody, Task};
use serde::Serialize;
use utoipa::{IntoParams, IntoResponses, ToResponse, ToSchema};

/// `{team}`: a team's name; another team's name answers 404 as if it did not exist.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
pub struct TeamPath {
    /// The team's name.
    #[param(pattern = "^[a-z0-9][a-z0-9_-]{0,62}$", example = "qa")]
    pub team: String,
}

/// `{team}` and a task `{id}`.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
pub struct TaskPath {
    /// The team's name.
    #[param(pattern = "^[a-z0-9][a-z0-9_-]{0,62}$", example = "qa")]
    pub team: String,
    /// A task id, `PREFIX-NNN`.
    #[param(min_length = 1, example = "TEST-001")]
    pub id: String,
}

/// `{team}` and an agent `{name}`.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
pub struct AgentPath {
    /// The team's name.
    #[param(pattern = "^[a-z0-9][a-z0-9_-]{0,62}$", example = "qa")]
    pub team: String,
    /// The agent's name.
    #[param(min_length = 1, example = "tester-1")]
    pub name: String,
}

/// `{team}` and a JSON Pointer into the shared memory, without its leading `/`.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
pub struct PointerPath {
    /// The team's name.
    #[param(pattern = "^[a-z0-9][a-z0-9_-]{0,62}$", example = "qa")]
    pub team: String,
    /// A JSON Pointer without its leading `/`, e.g. `test_strategy/test_framework`.
    #[param(min_length = 1, example = "test_strategy")]
    pub pointer: String,
}

/// `If-Match`: the version the change is based on (`3` or `"3"`); 412 when it is stale.
#[derive(IntoParams)]
#[into_params(parameter_in = Header)]
pub struct IfMatchHeader {
    /// The version the change is based on (`3` or `"3"`, the ETag form); `*` matches any.
    #[param(
        rename = "If-Match",
        pattern = "^(\\*|(W/)?\"?[0-9]{1,18}\"?)$",
        example = "\"1\""
    )]
    pub if_match: Option<String>,
}

/// `POST …/tasks` answers with one task for one task, with an array for an array.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum CreatedTasks {
    One(Box<Task>),
    Many(Vec<Task>),
}

/// `POST …/tasks/claim` answers with one task, or with `{"tasks": […]}` when `max` was given.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum Claimed {
    One(Box<Task>),
    Many(ClaimedTasks),
}

/// `GET /healthz` and `GET /readyz`.
#[derive(Serialize, ToSchema)]
pub struct Status {
    /// `ok`, `ready`, `unavailable` or `read_only`.
    #[schema(examples("ok"))]
    pub status: String,
}

/// One Server-Sent Event of `GET …/messages/stream`.
#[derive(ToSchema)]
pub struct SseMessage {
    /// The message's `seq`; a reconnecting client sends it back as `Last-Event-ID`.
    #[schema(pattern = "^[0-9]+$")]
    pub id: String,
    /// Always `message`.
    #[schema(pattern = "^message$")]
    pub event: String,
    /// The [`Message`](huddle_wire::Message) as JSON.
    #[schema(content_media_type = "application/json")]
    pub data: String,
}

/// One Server-Sent Event of `GET …/events`.
#[derive(ToSchema)]
pub struct SseChange {
    /// The event's `seq`; a reconnecting client sends it back as `Last-Event-ID`.
    #[schema(pattern = "^[0-9]+$")]
    pub id: String,
    /// The event's type: `task.created`, `message.posted`, `memory.updated`, …
    pub event: String,
    /// The [`Event`](huddle_wire::Event) as JSON.
    #[schema(content_media_type = "application/json")]
    pub data: String,
}

/// Bad input: malformed JSON, a wrong type, an unknown field or a value out of range;
/// `details.field` names it.
#[derive(ToResponse)]
pub struct BadRequest(pub ErrorBody);

/// No token, a malformed `Authorization` header, or an unknown or revoked token.
#[derive(ToResponse)]
#[response(headers(("WWW-Authenticate" = String, description = "`Bearer`")))]
pub struct Unauthorized(pub ErrorBody);

/// The caller's role may not do this (the admin token manages teams and agents only).
#[derive(ToResponse)]
pub struct Forbidden(pub ErrorBody);

/// No such team (also another team's), task, agent, route or memory value.
#[derive(ToResponse)]
pub struct NotFound(pub ErrorBody);

/// A conflict: a duplicate name or id, a dependency cycle (named in `details.cycle`), a task not
/// held by the caller or already closed.
#[derive(ToResponse)]
pub struct Conflict(pub ErrorBody);

/// `If-Match` names an older version; `details.currentVersion` is the current one.
#[derive(ToResponse)]
pub struct StaleVersion(pub ErrorBody);

/// The body, or the stored result of applying it, is larger than the configured limit.
#[derive(ToResponse)]
pub struct TooLarge(pub ErrorBody);

/// Too many requests for this token, or too many open streams.
#[derive(ToResponse)]
#[response(headers(("Retry-After" = u64, description = "Seconds to wait")))]
pub struct TooManyRequests(pub ErrorBody);

/// An internal error; the details are in the daemon's log, never in the answer.
#[derive(ToResponse)]
pub struct Internal(pub ErrorBody);

/// The store cannot take the request now (`store_unavailable`: the database is unreachable,
/// disk full, read-only or shutting down; `team_reads_busy`: the team's reads hold its whole
/// share of the read connections, `[limits] max_reads_per_team`); retry after `Retry-After`
/// seconds.
#[derive(ToResponse)]
#[response(headers(("Retry-After" = u64, description = "Seconds to wait")))]
pub struct Unavailable(pub ErrorBody);

/// Declares a set of error statuses for `responses(…)`: handlers name the set, and the document
/// gets one `$ref` to the shared response per status, as if each were written out.
macro_rules! error_set {
    ($(#[$doc:meta])* $set:ident: $($status:literal => $response:ident),+ $(,)?) => {
        $(#[$doc])*
        #[derive(IntoResponses)]
        #[allow(dead_code)] // described in the document, never built
        pub enum $set {
            $(
                #[response(status = $status)]
                $response(#[ref_response] $response),
            )+
        }
    };
}

error_set!(
    /// The errors of a request that changes state.
    WriteErrors: 400 => BadRequest, 401 => Unauthorized, 403 => Forbidden, 404 => NotFound,
    409 => Conflict, 413 => TooLarge, 429 => TooManyRequests, 500 => Internal,
    503 => Unavailable,
);

error_set!(
    /// The errors of a read with parameters (query, cursor, stream).
    QueryErrors: 400 => BadRequest, 401 => Unauthorized, 403 => Forbidden, 404 => NotFound,
    429 => TooManyRequests, 500 => Internal, 503 => Unavailable,
);

error_set!(
    /// The errors of a read without parameters, or of an action without a body.
    ReadErrors: 401 => Unauthorized, 403 => Forbidden, 404 => NotFound,
    429 => TooManyRequests, 500 => Internal, 503 => Unavailable,
);
