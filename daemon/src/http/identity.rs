//! Identity: the bearer token resolved to the admin or an agent, with a per-token rate limit.

use super::error::ApiError;
use super::{AppState, AuthEpoch};
use crate::identity::{hash_token, same_secret};
use crate::store::Caller;
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::header;
use axum::http::request::Parts;
use std::net::SocketAddr;

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
        // Known only when served over TCP (not for in-process `oneshot` tests).
        let client = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip());
        // A failure answers 401 and counts against the address, or 429 once it is used up.
        let failed = |error: ApiError| {
            if let Some(ip) = client {
                if let Err(limited) = state.failed_auth.check(ip) {
                    return limited;
                }
                state.failed_auth.failed(ip);
            }
            error
        };
        let header = parts.headers.get(header::AUTHORIZATION).ok_or_else(|| {
            failed(ApiError::unauthorized(
                "missing Authorization: Bearer <token>",
            ))
        })?;
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
                failed(ApiError::unauthorized(
                    "the Authorization header must be `Bearer <token>`",
                ))
            })?;
        let hash = hash_token(token);
        if let Some((caller, epoch)) = state.auth.get(&hash) {
            state.rate.check(&hash)?;
            parts.extensions.insert(epoch);
            state.presence.seen(&caller);
            in_request_span(&caller);
            return Ok(Principal::Agent(caller));
        }
        // The admin token is known without a lookup.
        if same_secret(token, &state.admin_token) {
            state.rate.check(&hash)?;
            return Ok(Principal::Admin);
        }
        // Not cached: looked up even for an address that keeps failing, so a valid token is
        // never refused for other clients' failures behind the same proxy address. A failure
        // costs one indexed read, no more than the cheapest valid request.
        // Read before the store: a revocation after this makes the insert a no-op.
        let epoch = state.auth.epoch();
        match state.store.authenticate(&hash).await? {
            Some(caller) => {
                state.rate.check(&hash)?;
                parts.extensions.insert(epoch.by(&hash));
                state.presence.seen(&caller);
                state.auth.insert(hash, caller.clone(), epoch);
                in_request_span(&caller);
                Ok(Principal::Agent(caller))
            }
            None => Err(failed(ApiError::unauthorized("unknown or revoked token"))),
        }
    }
}

/// Names the agent on the request's span (`http::request_span`), so every line logged while
/// the request is answered carries it; one span per request, not one more per handler.
fn in_request_span(caller: &Caller) {
    tracing::Span::current().record("agent", caller.agent.as_str());
}

/// The epoch at which the request's agent was authenticated (see `auth_cache`). Put after the
/// identity extractor ([`Principal`] or `Can`) in a handler's arguments.
impl FromRequestParts<AppState> for AuthEpoch {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &AppState) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<AuthEpoch>()
            .copied()
            .ok_or_else(|| ApiError::unauthorized("missing Authorization: Bearer <token>"))
    }
}
