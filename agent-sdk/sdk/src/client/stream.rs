//! Typed Server-Sent Events streams that reconnect by themselves.
//!
//! A [`Subscription`] remembers the `seq` of the last item it handed out. When the connection
//! drops (daemon restart, network blip, idle timeout), it reconnects with backoff and sends
//! `Last-Event-ID: <seq>`, so the daemon replays exactly what came after; items at or below the
//! cursor are dropped as a second guard, so nothing is lost and nothing repeats.

use super::error::root_cause;
use super::queries::StreamOptions;
use super::retry::Backoff;
use super::transport::read_error;
use super::{Client, Error};
use crate::wire::{Event, Message};
use eventsource_stream::Eventsource;
use futures::{Stream, StreamExt};
use reqwest::Url;
use serde::de::DeserializeOwned;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Instant;

/// Reconnect when nothing, not even the daemon's keep-alive comment (every 15 s by default),
/// arrived for this long.
const DEFAULT_IDLE: Duration = Duration::from_secs(45);

/// A live, resuming stream of `T` ([`Message`] or [`Event`]). Poll it with
/// [`futures::StreamExt::next`]; it ends only on an error that retrying cannot fix (such as 401
/// or 404), which it yields first, or when dropped.
pub struct Subscription<T> {
    inner: Pin<Box<dyn Stream<Item = Result<T, Error>> + Send>>,
}

impl<T> Stream for Subscription<T> {
    type Item = Result<T, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

impl<T> std::fmt::Debug for Subscription<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Subscription")
    }
}

impl Client {
    /// `GET …/messages/stream`: every message past `options.after` (all when `None`), then live
    /// ones, filtered by `from`, `to` and `kind`.
    pub fn stream_messages(&self, options: &StreamOptions) -> Result<Subscription<Message>, Error> {
        let mut url = self.team_url(&["messages", "stream"])?;
        add_filter(&mut url, "from", options.from.as_deref());
        add_filter(&mut url, "to", options.to.as_deref());
        add_filter(&mut url, "type", options.kind.as_deref());
        Ok(self.subscribe(url, Some("message"), "message", options))
    }

    /// `GET …/events`: every change in the team (`task.*`, `message.posted`, `memory.updated`…)
    /// past `options.after`, then live ones; `kind` filters by event type or family (`task.`).
    pub fn stream_events(&self, options: &StreamOptions) -> Result<Subscription<Event>, Error> {
        let mut url = self.team_url(&["events"])?;
        add_filter(&mut url, "type", options.kind.as_deref());
        Ok(self.subscribe(url, None, "event", options))
    }

    fn subscribe<T: DeserializeOwned + Send + 'static>(
        &self,
        url: Url,
        event_name: Option<&'static str>,
        label: &'static str,
        options: &StreamOptions,
    ) -> Subscription<T> {
        let policy = self.retry_policy();
        let reader = Reader {
            client: self.clone(),
            url,
            event_name,
            label,
            cursor: options.after.unwrap_or(0).max(0),
            events: None,
            idle: options.idle_timeout.unwrap_or(DEFAULT_IDLE),
            backoff: Backoff::new(policy.initial_delay, policy.max_delay),
            pause_first: false,
            up: None,
            finished: false,
        };
        let stream = futures::stream::unfold(reader, |mut r| async move {
            let item = r.next::<T>().await?;
            Some((item, r))
        });
        Subscription {
            inner: Box::pin(stream),
        }
    }
}

fn add_filter(url: &mut Url, name: &str, value: Option<&str>) {
    if let Some(v) = value.filter(|v| !v.is_empty()) {
        url.query_pairs_mut().append_pair(name, v);
    }
}

type SseEvents =
    Pin<Box<dyn Stream<Item = Result<eventsource_stream::Event, String>> + Send + 'static>>;

/// An open stream and when its last bytes arrived. The SSE parser swallows comments, so the
/// daemon's keep-alives are seen here, on the bytes, or an idle team would look dead.
struct Connection {
    events: SseEvents,
    last_bytes: Arc<Mutex<Instant>>,
}

impl Connection {
    fn idle_deadline(&self, idle: Duration) -> Instant {
        *self.last_bytes.lock().unwrap_or_else(|p| p.into_inner()) + idle
    }
}

/// The reconnecting state machine behind a [`Subscription`].
struct Reader {
    client: Client,
    /// The stream URL with its filters (the cursor travels as `Last-Event-ID`).
    url: Url,
    /// Only SSE events with this name are items (`message`); `None` takes all.
    event_name: Option<&'static str>,
    /// For log lines: `message` or `event`.
    label: &'static str,
    /// The `seq` of the last item handed out.
    cursor: i64,
    /// The open connection, if any.
    events: Option<Connection>,
    /// Reconnect after this long without a byte.
    idle: Duration,
    backoff: Backoff,
    /// Wait before the next connect (the last attempt failed or delivered nothing).
    pause_first: bool,
    /// Connection state for logging once per change: `None` before the first attempt.
    up: Option<bool>,
    finished: bool,
}

impl Reader {
    async fn next<T: DeserializeOwned>(&mut self) -> Option<Result<T, Error>> {
        loop {
            if self.finished {
                return None;
            }
            let Some(events) = self.events.as_mut() else {
                if self.pause_first {
                    tokio::time::sleep(self.backoff.next_delay()).await;
                }
                match connect(&self.client, &self.url, self.cursor).await {
                    Ok(events) => {
                        if self.up == Some(false) {
                            tracing::info!(
                                "{} stream reconnected; resuming after seq {}",
                                self.label,
                                self.cursor
                            );
                        }
                        self.up = Some(true);
                        self.events = Some(events);
                        // A connection that ends before delivering anything should not be
                        // retried at full speed.
                        self.pause_first = true;
                    }
                    Err(e) if e.is_transient() => self.down(&e.to_string()),
                    Err(e) => {
                        self.finished = true;
                        return Some(Err(e));
                    }
                }
                continue;
            };
            let deadline = events.idle_deadline(self.idle);
            match tokio::time::timeout_at(deadline, events.events.next()).await {
                // Bytes (a keep-alive comment) arrived since the deadline was set: keep waiting.
                Err(_) if events.idle_deadline(self.idle) > Instant::now() => {}
                Err(_) => {
                    let reason = format!(
                        "no data, not even a keep-alive, within {} s",
                        self.idle.as_secs_f64()
                    );
                    self.down(&reason)
                }
                Ok(None) => self.down("the daemon closed the stream"),
                Ok(Some(Err(e))) => self.down(&e),
                Ok(Some(Ok(event))) => {
                    let Ok(seq) = event.id.trim().parse::<i64>() else {
                        continue;
                    };
                    if seq <= self.cursor || self.event_name.is_some_and(|n| n != event.event) {
                        continue;
                    }
                    self.cursor = seq;
                    self.backoff.reset();
                    self.pause_first = false;
                    return Some(
                        serde_json::from_str(&event.data).map_err(|e| Error::Protocol {
                            what: format!("{} stream item {seq}", self.label),
                            reason: e.to_string(),
                        }),
                    );
                }
            }
        }
    }

    /// Drops the connection and logs the loss once per change of state.
    fn down(&mut self, reason: &str) {
        self.events = None;
        self.pause_first = true;
        if self.up != Some(false) {
            tracing::warn!("{} stream lost ({reason}); reconnecting", self.label);
        }
        self.up = Some(false);
    }
}

/// Opens the stream, resuming after `cursor`. A free function so the `Reader` (which holds a
/// non-`Sync` stream) is never borrowed across an await.
async fn connect(client: &Client, url: &Url, cursor: i64) -> Result<Connection, Error> {
    let base = client.base_url().clone();
    let mut req = client
        .http()
        .get(client.on_current(url))
        .header(reqwest::header::ACCEPT, "text/event-stream")
        .header("last-event-id", cursor.to_string());
    if let Some(token) = client.token() {
        req = req.bearer_auth(token);
    }
    let unreachable = |reason: String| Error::Unreachable {
        url: client.urls_for_errors(),
        reason,
        attempts: 1,
    };
    let res = tokio::time::timeout(client.timeout(), req.send())
        .await
        .map_err(|_| unreachable("timed out".into()))?
        .map_err(|e| {
            // The next reconnect goes to the next daemon, if several were given.
            if e.is_connect() {
                client.fail_over(&base);
            }
            unreachable(root_cause(&e))
        })?;
    if !res.status().is_success() {
        return Err(Error::Api(read_error(res).await));
    }
    let last_bytes = Arc::new(Mutex::new(Instant::now()));
    let seen = last_bytes.clone();
    let events = res
        .bytes_stream()
        .inspect(move |_| *seen.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now())
        .eventsource()
        .map(|r| r.map_err(|e| e.to_string()));
    Ok(Connection {
        events: Box::pin(events),
        last_bytes,
    })
}
