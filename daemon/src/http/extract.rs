//! Extractors that turn every client mistake into the API's own error shape: JSON bodies,
//! query strings, `If-Match`, and the caller's identity.

use super::error::ApiError;
use super::AppState;
use crate::identity::{hash_token, same_secret};
use crate::store::Caller;
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, RawPathParams, Request};
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use huddle_sdk::wire::Role;
use serde::de::DeserializeOwned;
use serde_json::json;

/// A JSON body; malformed JSON, wrong types and unknown fields answer 400 naming the field,
/// oversized bodies 413. An empty body counts as `{}` so bodiless POSTs work with curl.
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let Body(bytes) = Body::from_request(req, state).await?;
        let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
            b"{}"
        } else {
            &bytes
        };
        parse_json(bytes).map(ApiJson)
    }
}

/// The raw body, with the size limit answered as 413 in the API's error shape.
pub struct Body(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for Body {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        Bytes::from_request(req, state)
            .await
            .map(Body)
            .map_err(|rejection| {
                if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::new(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        "too_large",
                        "the request body is larger than the configured limit",
                    )
                } else {
                    ApiError::new(
                        StatusCode::BAD_REQUEST,
                        "invalid_body",
                        rejection.body_text(),
                    )
                }
            })
    }
}

pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_json",
                format!("the body is not valid JSON: {inner}"),
            )
        } else {
            let field = if path == "." { String::new() } else { path };
            let message = if field.is_empty() {
                inner.to_string()
            } else {
                format!("{field}: {inner}")
            };
            ApiError::new(StatusCode::BAD_REQUEST, "invalid_field", message)
                .with_details(json!({ "field": field }))
        }
    })
}

/// A query string; a bad value answers 400 naming the parameter.
pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::try_from_uri(&parts.uri)
            .map(|q| ApiQuery(q.0))
            .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "invalid_query", e.body_text()))
    }
}

/// `If-Match: 3` or `If-Match: "3"` (the ETag form huddle sends).
pub struct IfMatch(pub Option<i64>);

impl<S: Send + Sync> FromRequestParts<S> for IfMatch {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let Some(value) = parts.headers.get(header::IF_MATCH) else {
            return Ok(IfMatch(None));
        };
        let text = value
            .to_str()
            .unwrap_or_default()
            .trim()
            .trim_start_matches("W/")
            .trim_matches('"');
        text.parse::<i64>().map(|v| IfMatch(Some(v))).map_err(|_| {
            ApiError::bad_request(
                "If-Match",
                "If-Match must be a version number such as 3 or \"3\"",
            )
        })
    }
}

/// Who is calling: the admin, or an agent of some team.
pub enum Principal {
    Admin,
    Agent(Caller),
}

impl FromRequestParts<AppState> for Principal {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let header = parts
            .headers
            .get(header::AUTHORIZATION)
            .ok_or_else(|| ApiError::unauthorized("missing Authorization: Bearer <token>"))?;
        let token = header
            .to_str()
            .ok()
            .and_then(|h| {
                h.strip_prefix("Bearer ")
                    .or_else(|| h.strip_prefix("bearer "))
            })
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                ApiError::unauthorized("the Authorization header must be `Bearer <token>`")
            })?;
        if same_secret(token, &state.admin_token) {
            return Ok(Principal::Admin);
        }
        let hash = hash_token(token);
        if let Some(caller) = state.auth.get(&hash) {
            return Ok(Principal::Agent(caller));
        }
        match state.store.authenticate(&hash).await? {
            Some(caller) => {
                state.auth.insert(hash, caller.clone());
                Ok(Principal::Agent(caller))
            }
            None => Err(ApiError::unauthorized("unknown or revoked token")),
        }
    }
}

/// The `{team}` of the path, if the route has one.
pub fn path_team(params: &RawPathParams) -> Option<&str> {
    params.iter().find(|(k, _)| *k == "team").map(|(_, v)| v)
}

/// An agent of the team named in the path. Another team's token gets 404, as if the team did
/// not exist; the admin token gets 403 (it manages teams and agents only).
pub struct Member(pub Caller);

impl FromRequestParts<AppState> for Member {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let params = RawPathParams::from_request_parts(parts, state)
            .await
            .map_err(|_| ApiError::not_found("no such route"))?;
        let team = path_team(&params).unwrap_or_default().to_string();
        match Principal::from_request_parts(parts, state).await? {
            Principal::Admin => Err(ApiError::forbidden(
                "the admin token manages teams and agents; use an agent token for team resources",
            )),
            Principal::Agent(caller) if caller.team == team => Ok(Member(caller)),
            Principal::Agent(_) => Err(ApiError::not_found(format!("team {team} not found"))),
        }
    }
}

/// A member that may change things: every role but `observer`.
pub struct Actor(pub Caller);

impl FromRequestParts<AppState> for Actor {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let Member(caller) = Member::from_request_parts(parts, state).await?;
        if caller.role == Role::Observer {
            return Err(ApiError::forbidden(format!(
                "{} is an observer and may only read",
                caller.agent
            )));
        }
        Ok(Actor(caller))
    }
}
