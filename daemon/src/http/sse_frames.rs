//! The SSE wire format: the response, its frames, comments and keep-alives.

use crate::hub::StreamItem;
use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use futures::Stream;
use std::convert::Infallible;
use std::fmt::Write as _;

/// A `text/event-stream` response whose body is the stream's frames, written as they come.
pub fn sse<S>(s: S) -> Response
where
    S: Stream<Item = Result<Bytes, Infallible>> + Send + 'static,
{
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(s),
    )
        .into_response()
}

/// One SSE frame: `id: <seq>`, `event: <name>`, `data: <json>`. Written by hand rather than
/// through axum's `Sse`, which rescans the data for newlines and resets a keep-alive timer on
/// every event; here the JSON is compact (no raw newlines) and names are `[a-z0-9_.]`.
pub fn frame(item: &StreamItem, name: &str) -> Bytes {
    let json = item.json();
    let mut text = String::with_capacity(json.len() + name.len() + 40);
    let _ = write!(text, "id: {}\nevent: {name}\ndata: {json}\n\n", item.seq);
    Bytes::from(text)
}

/// An SSE comment frame (clients ignore it; proxies see traffic).
pub fn comment(text: &str) -> Bytes {
    Bytes::from(format!(": {text}\n\n"))
}

/// Sent after `keepalive_secs` without a frame, so proxies keep idle streams open.
pub const KEEPALIVE: &[u8] = b":\n\n";
