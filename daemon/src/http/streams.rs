//! Server-Sent Events: `/events` (every change) and `/messages/stream` (messages only).
//!
//! Each stream subscribes to the hub first, then replays from the database everything past the
//! client's cursor (`Last-Event-ID` or `?after=`), then follows live items. If the live feed
//! skips ahead or the bounded buffer overflowed (the client read too slowly), the stream says so
//! in a comment and catches up from the database by its cursor, so nothing is lost or repeated
//! and no writer ever waits for a reader.

use super::authz::{act, Can};
use super::error::{ApiError, ApiResult};
use super::extract::ApiQuery;
use super::limits::{ClientAddr, StreamSlot};
use super::openapi_types::*;
use super::sse_frames::{comment, frame, sse, KEEPALIVE};
use super::AppState;
use super::{AuthEpoch, Revocation};
use crate::hub::{StreamItem, ToFollower};
use crate::store::Caller;
use crate::store::{MessageFilter, StoreResult};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use futures::Stream;
use serde::Deserialize;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::time::Instant;
use utoipa::IntoParams;

/// Items read from the database per catch-up query. Small on purpose: a subscriber that stops
/// reading is suspended with the rest of its page in hand, so the page is what a stuck stream
/// costs in memory; at 64 items that is tens of kilobytes, while catching up still reads
/// hundreds of thousands of items per second.
const PAGE: usize = 64;

#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct StreamQuery {
    /// Resume after this sequence (for clients that cannot send `Last-Event-ID`).
    after: Option<i64>,
    /// Messages only: from this agent.
    from: Option<String>,
    /// Messages only: to this agent, role or `*`.
    to: Option<String>,
    /// Message type, or event type; an event filter ending in `.` or `.*` matches a family.
    #[serde(rename = "type")]
    kind: Option<String>,
}

/// Which items a subscriber wants.
#[derive(Clone)]
struct Filter {
    /// The live feed is the recipient's own channel (see `Hub::subscribe_messages_to`).
    routed_by_to: bool,
    from: Option<String>,
    to: Option<String>,
    kind: Option<String>,
}

impl Filter {
    fn matches(&self, item: &StreamItem) -> bool {
        let kind_ok = match self.kind.as_deref() {
            None => true,
            Some(k) if k.ends_with(".*") || k.ends_with('.') => {
                item.kind.starts_with(k.trim_end_matches('*'))
            }
            Some(k) => item.kind == k,
        };
        kind_ok
            && self.from.as_deref().is_none_or(|f| item.from == f)
            && self.to.as_deref().is_none_or(|t| item.to == t)
    }
}

#[derive(Clone, Copy)]
enum Source {
    Events,
    Messages,
}

impl Source {
    /// The SSE event name of an item: its type for events, `message` for messages.
    fn event_name(self, item: &StreamItem) -> &str {
        match self {
            Source::Events => item.kind.as_str(),
            Source::Messages => "message",
        }
    }
}

fn cursor(headers: &HeaderMap, after: Option<i64>) -> ApiResult<i64> {
    match headers.get("last-event-id") {
        Some(v) => v
            .to_str()
            .ok()
            .and_then(|s| s.trim().parse::<i64>().ok())
            .filter(|n| *n >= 0)
            .ok_or_else(|| {
                ApiError::bad_request("Last-Event-ID", "Last-Event-ID must be a sequence number")
            }),
        None => Ok(after.unwrap_or(0).max(0)),
    }
}

/// Every change in the team as Server-Sent Events, from the cursor on, until the client leaves.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/events",
    operation_id = "streamEvents",
    tag = "streams",
    params(
        TeamPath,
        StreamQuery,
        ("Last-Event-ID" = Option<String>, Header,
            description = "Resume after this sequence number (sent by EventSource on reconnect)"),
    ),
    responses(
        (status = 200, description = "Server-Sent Events: `id` = seq, `event` = the event type \
                                       (`task.created`, `message.posted`, …), `data` = the event",
            content_type = "text/event-stream", body = SseChange),
        QueryErrors,
    )
)]
pub async fn events(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadStreams>,
    ClientAddr(client): ClientAddr,
    epoch: AuthEpoch,
    headers: HeaderMap,
    ApiQuery(q): ApiQuery<StreamQuery>,
) -> ApiResult<Response> {
    let start = cursor(&headers, q.after)?;
    let slot = state
        .streams
        .acquire(caller.team_id, &caller.agent, client)?;
    let rx = Feed::All(state.hub.subscribe_events(caller.team_id));
    let filter = Filter {
        routed_by_to: false,
        from: None,
        to: None,
        kind: q.kind,
    };
    Ok(sse(stream(
        state.clone(),
        caller,
        epoch,
        slot,
        start,
        rx,
        filter,
        Source::Events,
    )))
}

/// The team's messages as Server-Sent Events, from the cursor on, until the client leaves.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/messages/stream",
    operation_id = "streamMessages",
    tag = "streams",
    params(
        TeamPath,
        StreamQuery,
        ("Last-Event-ID" = Option<String>, Header,
            description = "Resume after this sequence number (sent by EventSource on reconnect)"),
    ),
    responses(
        (status = 200, description = "Server-Sent Events: `id` = seq, `event` = `message`, \
                                       `data` = the message",
            content_type = "text/event-stream", body = SseMessage),
        QueryErrors,
    )
)]
pub async fn messages(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadStreams>,
    ClientAddr(client): ClientAddr,
    epoch: AuthEpoch,
    headers: HeaderMap,
    ApiQuery(q): ApiQuery<StreamQuery>,
) -> ApiResult<Response> {
    let start = cursor(&headers, q.after)?;
    if let Some(to) = q.to.as_deref().filter(|t| !t.is_empty()) {
        known_recipient(&state, &caller, to).await?;
    }
    let slot = state
        .streams
        .acquire(caller.team_id, &caller.agent, client)?;
    let rx = match q.to.as_deref() {
        Some(to) if !to.is_empty() => Feed::To(state.hub.subscribe_messages_to(caller.team_id, to)),
        _ => Feed::All(state.hub.subscribe_messages(caller.team_id)),
    };
    let filter = Filter {
        routed_by_to: q.to.as_deref().is_some_and(|t| !t.is_empty()),
        from: q.from,
        to: q.to,
        kind: q.kind,
    };
    Ok(sse(stream(
        state.clone(),
        caller,
        epoch,
        slot,
        start,
        rx,
        filter,
        Source::Messages,
    )))
}

/// `?to=` must name an agent of the team, a role or `*`: each distinct recipient followed costs
/// a channel while it is followed, so arbitrary values are refused rather than kept.
async fn known_recipient(state: &AppState, caller: &Caller, to: &str) -> ApiResult<()> {
    if to == "*" || to.parse::<huddle_wire::Role>().is_ok() {
        return Ok(());
    }
    let agents = state.store.list_agents(caller.team_id).await?;
    if agents.iter().any(|a| a.name == to) {
        return Ok(());
    }
    Err(ApiError::bad_request(
        "to",
        format!("`to` must be an agent of the team, a role or `*`, got {to:?}"),
    ))
}

/// The live feed a stream follows: every item, or one recipient's messages.
enum Feed {
    All(broadcast::Receiver<Arc<StreamItem>>),
    To(ToFollower),
}

impl Feed {
    async fn recv(&mut self) -> Result<Arc<StreamItem>, RecvError> {
        match self {
            Feed::All(rx) => rx.recv().await,
            Feed::To(rx) => rx.recv().await,
        }
    }
}

/// A page of stored items past `after`, in sequence order.
async fn fetch(
    state: &AppState,
    team_id: i64,
    after: i64,
    source: Source,
) -> StoreResult<Vec<StreamItem>> {
    fn to_json(v: &impl serde::Serialize) -> Arc<str> {
        serde_json::to_string(v).unwrap_or_default().into()
    }
    Ok(match source {
        Source::Events => state
            .store
            .list_events(team_id, after, PAGE)
            .await?
            .into_iter()
            .map(|e| {
                StreamItem::new(
                    e.seq,
                    e.kind.clone(),
                    String::new(),
                    String::new(),
                    to_json(&e),
                )
            })
            .collect(),
        Source::Messages => state
            .store
            .list_messages(
                team_id,
                MessageFilter {
                    after,
                    limit: PAGE,
                    ..Default::default()
                },
            )
            .await?
            .items
            .into_iter()
            .map(|m| {
                let json = to_json(&m);
                StreamItem::new(m.seq, m.kind, m.from, m.to, json)
            })
            .collect(),
    })
}

/// The stream body. It holds `slot` (the per-token stream count) and the caller's presence for
/// its lifetime and ends on
/// shutdown or when the caller's token is revoked or rotated.
#[allow(clippy::too_many_arguments)]
fn stream(
    state: AppState,
    caller: Caller,
    epoch: AuthEpoch,
    slot: StreamSlot,
    start: i64,
    mut rx: Feed,
    filter: Filter,
    source: Source,
) -> impl Stream<Item = Result<Bytes, Infallible>> {
    let team_id = caller.team_id;
    // Checked before every frame, so a stream that stalled for any length of time still ends
    // at its next item once its token is revoked.
    let mut revocation = Revocation::new(&state.auth, &caller, epoch);
    let every = Duration::from_secs(state.settings.streams.keepalive_secs.max(1));
    // A follower is online for as long as it follows.
    let online = state.presence.waiting(&caller);
    async_stream::stream! {
        let _slot = slot;
        let _online = online;
        let mut cursor = start;
        // The keep-alive timer is re-armed when it fires, not on every frame.
        let mut last_sent = Instant::now();
        let keepalive = tokio::time::sleep_until(last_sent + every);
        tokio::pin!(keepalive);
        loop {
            // Catch up from the database until it has nothing past the cursor.
            loop {
                let page = match fetch(&state, team_id, cursor, source).await {
                    Ok(page) => page,
                    Err(e) => {
                        tracing::warn!(error = %e, "stream catch-up failed; closing so the client resumes");
                        return;
                    }
                };
                let full = page.len() == PAGE;
                for item in page {
                    if revocation.is_revoked(&state.auth) {
                        return;
                    }
                    cursor = item.seq;
                    if filter.matches(&item) {
                        last_sent = Instant::now();
                        yield Ok(frame(&item, source.event_name(&item)));
                    }
                }
                if !full {
                    break;
                }
            }
            // Follow live items while they arrive in order.
            loop {
                let received = tokio::select! {
                    r = rx.recv() => r,
                    _ = &mut keepalive => {
                        let due = last_sent + every;
                        if Instant::now() >= due {
                            last_sent = Instant::now();
                            keepalive.as_mut().reset(last_sent + every);
                            yield Ok(Bytes::from_static(KEEPALIVE));
                        } else {
                            keepalive.as_mut().reset(due);
                        }
                        continue;
                    }
                    _ = state.shutdown.cancelled() => return,
                    _ = revocation.revoked(&state.auth) => return,
                };
                if revocation.is_revoked(&state.auth) {
                    return;
                }
                match received {
                    Ok(item) if item.seq <= cursor => continue,
                    // A recipient channel skips other recipients' sequence numbers by design;
                        // it was subscribed before the catch-up, so only a lag can lose items.
                    Ok(item) if item.seq == cursor + 1 || filter.routed_by_to => {
                        cursor = item.seq;
                        if filter.matches(&item) {
                            last_sent = Instant::now();
                            yield Ok(frame(&item, source.event_name(&item)));
                        }
                    }
                    Ok(_) => break,
                    Err(RecvError::Lagged(missed)) => {
                        yield Ok(comment(&format!("fell {missed} behind; resuming from {cursor}")));
                        break;
                    }
                    Err(RecvError::Closed) => return,
                }
            }
        }
    }
}
