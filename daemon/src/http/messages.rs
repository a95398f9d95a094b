//! The message bus over HTTP: post, list, inbox (long-poll) and ack.

use super::authz::{act, Can};
use super::error::{ApiError, ApiResult};
use super::extract::{parse_batch, ApiJson, ApiQuery, Body};
use super::openapi_types::*;
use super::{AppState, AuthEpoch, Revocation};
use crate::store::{Caller, MessageFilter, Posted};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use huddle_wire::{
    InboxAck, InboxCursor, Message, MessageList, PostMessage, PostMessages, PostedMessages,
};
use serde::Deserialize;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use utoipa::IntoParams;

const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// 201 with the stored message; a retry with the same `Idempotency-Key` answers with the same
/// message (and `Idempotent-Replayed: true`) without storing it again.
#[utoipa::path(
    post,
    path = "/v1/teams/{team}/messages",
    operation_id = "postMessage",
    tag = "messages",
    params(
        TeamPath,
        ("Idempotency-Key" = Option<String>, Header,
            description = "1–255 visible ASCII characters; a retry with the same key is \
                           answered with the stored message"),
    ),
    request_body = PostMessage,
    responses(
        (status = 201, description = "The stored message", body = Message,
            headers(("Idempotent-Replayed" = String,
                description = "`true` when the key was seen before"))),
        WriteErrors,
    )
)]
pub async fn post(
    State(state): State<AppState>,
    Can(caller, _): Can<act::PostMessages>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<PostMessage>,
) -> ApiResult<Response> {
    let key = headers
        .get(IDEMPOTENCY_KEY)
        .map(|v| v.to_str().unwrap_or_default());
    let posted = post_message(&state, &caller, body, "Idempotency-Key", key).await?;
    let mut response = (StatusCode::CREATED, Json(posted.message)).into_response();
    if posted.replayed {
        response
            .headers_mut()
            .insert("idempotent-replayed", HeaderValue::from_static("true"));
    }
    Ok(response)
}

/// Posts one message with an optional idempotency key; `key_field` names where the key came
/// from (the HTTP header, the MCP argument) in errors (HTTP and MCP).
pub async fn post_message(
    state: &AppState,
    caller: &Caller,
    message: PostMessage,
    key_field: &str,
    key: Option<&str>,
) -> ApiResult<Posted> {
    let key = idempotency_key(key_field, key)?;
    let posted = state.store.post_message(caller, message, key).await?;
    crate::metrics::messages_posted(usize::from(!posted.replayed));
    Ok(posted)
}

/// Posts one message and changes the shared memory with `ops` in the same store transaction,
/// both or neither (`team_msg`'s `state_update`); the message is checked and counted against
/// the limits and quotas exactly as [`post_message`]'s, the change as a memory patch's.
pub async fn post_message_changing_memory(
    state: &AppState,
    caller: &Caller,
    message: PostMessage,
    ops: crate::store::MemoryOps,
) -> ApiResult<(Posted, huddle_wire::Memory)> {
    let posted = state
        .store
        .post_message_changing_memory(caller, message, ops)
        .await?;
    crate::metrics::messages_posted(1);
    Ok(posted)
}

/// An optional idempotency key, checked; `field` names it in the error.
fn idempotency_key(field: &str, key: Option<&str>) -> ApiResult<Option<String>> {
    match key.map(str::trim) {
        None => Ok(None),
        Some(k) if valid_key(k) => Ok(Some(k.to_string())),
        Some(_) => Err(ApiError::bad_request(
            field,
            format!("{field} must be 1–255 visible ASCII characters"),
        )),
    }
}

/// An idempotency key: 1–255 visible ASCII characters.
fn valid_key(key: &str) -> bool {
    !key.is_empty() && key.len() <= 255 && key.bytes().all(|b| b.is_ascii_graphic())
}

/// 201 with every message stored, in request order and with consecutive `seq`s — or, when one
/// item is refused, an error naming it (`messages[i]`) and nothing stored. For agents that
/// produce many messages at once (a run's per-test results): one request and one commit.
#[utoipa::path(
    post,
    path = "/v1/teams/{team}/messages/batch",
    operation_id = "postMessages",
    tag = "messages",
    params(TeamPath),
    request_body = PostMessages,
    responses(
        (status = 201, description = "The stored messages, in request order", body = PostedMessages),
        WriteErrors,
    )
)]
pub async fn post_many(
    State(state): State<AppState>,
    Can(caller, _): Can<act::PostMessages>,
    Body(body): Body,
) -> ApiResult<Response> {
    let max = state.settings.limits.max_batch;
    let req: PostMessages = parse_batch(&body, "messages", max)?;
    tracing::Span::current().record("count", req.messages.len());
    let mut items = Vec::with_capacity(req.messages.len());
    for (i, item) in req.messages.into_iter().enumerate() {
        if item
            .idempotency_key
            .as_deref()
            .is_some_and(|k| !valid_key(k))
        {
            let field = format!("messages[{i}].idempotencyKey");
            let message = format!("{field} must be 1–255 visible ASCII characters");
            return Err(ApiError::bad_request(&field, message));
        }
        items.push(item.into_parts());
    }
    let posted = state.store.post_messages(&caller, items).await?;
    let replayed: Vec<usize> = (0..posted.len()).filter(|&i| posted[i].replayed).collect();
    crate::metrics::messages_posted(posted.len() - replayed.len());
    let messages = posted.into_iter().map(|p| p.message).collect();
    let answer = PostedMessages { messages, replayed };
    Ok((StatusCode::CREATED, Json(answer)).into_response())
}

/// The filters of a message list: the query string of `GET /messages` and the MCP `msg_list`
/// input.
#[derive(Debug, Default, Deserialize, IntoParams, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Only messages past this `seq` (the `next` of the previous page).
    pub after: Option<i64>,
    /// Only messages from this agent.
    pub from: Option<String>,
    /// Only messages to this agent, role or `*`.
    pub to: Option<String>,
    /// Only messages of this type.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Page size (100 by default). A page also stops before `[limits] max_page_bytes` of
    /// messages (a single larger message comes alone): `next` then continues it.
    pub limit: Option<usize>,
    /// The newest `limit` messages that match instead of the oldest past `after` ("the last
    /// N", in `seq` order; with `after`, only those past it); `next` is the cursor for what
    /// comes later.
    pub newest: Option<bool>,
}

/// A page size: 100 by default, at most `limits.max_page_size`.
pub fn page_size(state: &AppState, requested: Option<usize>) -> ApiResult<usize> {
    let max = state.settings.limits.max_page_size;
    let limit = requested.unwrap_or(100.min(max));
    if !(1..=max).contains(&limit) {
        return Err(ApiError::bad_request(
            "limit",
            format!("`limit` must be between 1 and {max}, got {limit}"),
        ));
    }
    Ok(limit)
}

/// A page of the team's messages in `seq` order; `next` is the `after` of the following page.
/// A page holds at most `limit` messages and at most `[limits] max_page_bytes` of them (a
/// single larger message comes alone), so a page of large `data` is shorter, with `next`.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/messages",
    operation_id = "listMessages",
    tag = "messages",
    params(TeamPath, ListQuery),
    responses(
        (status = 200, description = "A page of messages", body = MessageList),
        QueryErrors,
    )
)]
pub async fn list(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadMessages>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<Json<MessageList>> {
    list_messages(&state, &caller, q).await.map(Json)
}

/// A page of the caller's team's messages (HTTP and MCP).
pub async fn list_messages(
    state: &AppState,
    caller: &Caller,
    q: ListQuery,
) -> ApiResult<MessageList> {
    let limit = page_size(state, q.limit)?;
    if q.newest == Some(true) {
        return newest_messages(state, caller, q, limit).await;
    }
    let filter = MessageFilter {
        after: q.after.unwrap_or(0).max(0),
        from: q.from.filter(|s| !s.is_empty()),
        to: q.to.filter(|s| !s.is_empty()),
        kind: q.kind.filter(|s| !s.is_empty()),
        limit,
        max_bytes: Some(state.settings.limits.max_page_bytes),
    };
    let page = state.store.list_messages(caller.team_id, filter).await?;
    let next = (page.cut || page.items.len() == limit)
        .then(|| page.items.last().map(|m| m.seq))
        .flatten();
    Ok(MessageList {
        messages: page.items,
        next,
    })
}

/// The newest `limit` messages matching `q`'s filters, oldest first (the search's newest-first
/// page, turned round), with `next` the last one's `seq` so a reader can go on from there.
async fn newest_messages(
    state: &AppState,
    caller: &Caller,
    q: ListQuery,
    limit: usize,
) -> ApiResult<MessageList> {
    let search = crate::store::MessageSearch {
        from: q.from.filter(|s| !s.is_empty()),
        to: q.to.filter(|s| !s.is_empty()),
        kind: q.kind.filter(|s| !s.is_empty()),
        limit,
        max_bytes: Some(state.settings.limits.max_page_bytes),
        ..Default::default()
    };
    let (page, _) = state.store.search_messages(caller.team_id, search).await?;
    // With `after`: the newest of those past it (the newest N overall, those before it dropped).
    let after = q.after.unwrap_or(0);
    let mut messages: Vec<_> = page.items.into_iter().filter(|m| m.seq > after).collect();
    messages.reverse();
    let next = messages.last().map(|m| m.seq);
    Ok(MessageList { messages, next })
}

/// How to read the inbox: the query string of `GET /inbox` and the MCP `inbox_read` input.
#[derive(Debug, Default, Deserialize, IntoParams, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct InboxQuery {
    /// Wait up to this long for a first message (long poll); 0 by default.
    pub wait_ms: Option<u64>,
    /// Page size (100 by default); a page also stops before `[limits] max_page_bytes`.
    pub limit: Option<usize>,
}

/// Unacknowledged messages for the caller; waits up to `waitMs` for the first one. Reading does
/// not move the cursor: `POST /inbox/ack` does.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/inbox",
    operation_id = "readInbox",
    tag = "messages",
    params(TeamPath, InboxQuery),
    responses(
        (status = 200, description = "Unacknowledged messages to the caller (empty after `waitMs`)",
            body = MessageList),
        QueryErrors,
    )
)]
pub async fn inbox(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadInbox>,
    epoch: AuthEpoch,
    ApiQuery(q): ApiQuery<InboxQuery>,
) -> ApiResult<Json<MessageList>> {
    let max_wait = state.settings.tasks.max_wait_ms;
    // Over HTTP a client that leaves drops this future, which ends the wait.
    let departed = CancellationToken::new();
    read_inbox(&state, &caller, epoch, q, max_wait, &departed)
        .await
        .map(Json)
}

/// The caller's unacknowledged messages, waiting up to `waitMs` (at most `max_wait`) for a first
/// one; the wait ends when the client leaves (`departed`). Reading never moves the cursor, so a
/// departed client loses nothing (HTTP and MCP).
pub async fn read_inbox(
    state: &AppState,
    caller: &Caller,
    epoch: AuthEpoch,
    q: InboxQuery,
    max_wait: u64,
    departed: &CancellationToken,
) -> ApiResult<MessageList> {
    let limit = page_size(state, q.limit)?;
    let wait_ms = q.wait_ms.unwrap_or(0);
    if wait_ms > max_wait {
        return Err(ApiError::bad_request(
            "waitMs",
            format!("`waitMs` must be at most {max_wait}, got {wait_ms}"),
        ));
    }
    let deadline = Instant::now() + Duration::from_millis(wait_ms);
    let _online = (wait_ms > 0).then(|| state.presence.waiting(caller));
    let _waiting = (wait_ms > 0).then(|| crate::metrics::LongPoll::start("inbox"));
    let mut posted = state.hub.watch_messages(caller.team_id);
    let mut revocation = Revocation::new(&state.auth, caller, epoch);
    loop {
        if revocation.is_revoked(&state.auth) {
            return Err(ApiError::revoked_while_waiting());
        }
        posted.borrow_and_update();
        let max_bytes = state.settings.limits.max_page_bytes;
        let messages = state.store.inbox(caller, limit, max_bytes).await?.items;
        if !messages.is_empty() {
            let next = messages.last().map(|m| m.seq);
            return Ok(MessageList { messages, next });
        }
        tokio::select! {
            r = posted.changed() => if r.is_err() { break },
            _ = tokio::time::sleep_until(deadline) => break,
            _ = state.shutdown.cancelled() => break,
            _ = departed.cancelled() => break,
            _ = revocation.revoked(&state.auth) => return Err(ApiError::revoked_while_waiting()),
        }
    }
    Ok(MessageList {
        messages: Vec::new(),
        next: None,
    })
}

/// Marks everything up to and including `seq` as handled; the cursor never moves back.
#[utoipa::path(
    post,
    path = "/v1/teams/{team}/inbox/ack",
    operation_id = "ackInbox",
    tag = "messages",
    params(TeamPath),
    request_body = InboxAck,
    responses(
        (status = 200, description = "The caller's inbox cursor", body = InboxCursor),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 413, response = TooLarge),
        (status = 429, response = TooManyRequests),
        (status = 500, response = Internal),
        (status = 503, response = Unavailable),
    )
)]
pub async fn ack(
    State(state): State<AppState>,
    Can(caller, _): Can<act::AckInbox>,
    ApiJson(body): ApiJson<InboxAck>,
) -> ApiResult<Json<InboxCursor>> {
    ack_inbox(&state, &caller, body).await.map(Json)
}

/// Moves the caller's inbox cursor to `seq`, never back (HTTP and MCP).
pub async fn ack_inbox(state: &AppState, caller: &Caller, ack: InboxAck) -> ApiResult<InboxCursor> {
    let cursor = state.store.ack_inbox(caller, ack.seq).await?;
    Ok(InboxCursor { cursor })
}
