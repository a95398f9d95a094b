//! The accept loop. It does what `axum::serve` does, plus connection settings axum does not
//! expose: `TCP_NODELAY`, a bound on what hyper buffers per connection, a time limit for request
//! heads (which also closes idle keep-alive connections), a cap on open connections (and on those
//! of one client address, `address_slots.rs`), and the client's address in each request's
//! extensions.
//!
//! The buffer bound matters for streams: hyper keeps polling a response body until its write
//! buffer holds `max_buf_size` bytes (about 400 KB by default), so every subscriber that stops
//! reading would pin that much memory. With a small bound a stuck stream stops being polled
//! early, its hub receiver falls behind the bounded channel, and it costs almost nothing until
//! it reads again (then it catches up from the database).

use super::address_slots::AddressSlots;
use super::error::ApiError;
use crate::config::ServerSettings;
use axum::extract::ConnectInfo;
use axum::http::StatusCode;
use axum::Router;
use futures::future::Either;
use huddle_wire::{codes, ErrorBody, ErrorInfo};
use hyper::body::Incoming;
use hyper::Request;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tower::ServiceExt;

/// Bytes hyper may buffer per connection, reading or writing (hyper's minimum is 8 KiB).
/// Request heads must fit (larger ones get 431); bodies and answers pass through in pieces.
pub const MAX_HEAD_BYTES: usize = 32 * 1024;

/// How long a connection past its address's cap waits before its 503, and how many may wait
/// at once (each holds a file descriptor; past it they are closed at once).
const TARPIT: Duration = Duration::from_secs(1);
const TARPIT_SLOTS: usize = 256;

/// Header fields per request head (hyper's default); more get 431 like an oversized head.
pub const MAX_HEADERS: usize = 100;

/// Serves `app` until `shutdown` completes, then stops accepting, asks every connection to
/// finish its current exchange, and returns once all have closed.
pub async fn serve(
    mut listener: TcpListener,
    app: Router,
    settings: &ServerSettings,
    shutdown: impl Future<Output = ()>,
) {
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.max_buf_size(MAX_HEAD_BYTES)
        .max_headers(MAX_HEADERS)
        .timer(TokioTimer::new())
        // Counted from when the connection waits for a request: a head that never completes
        // and an idle keep-alive connection are both closed after it.
        .header_read_timeout(Duration::from_millis(settings.head_timeout_ms.max(1)));
    let slots = Arc::new(Semaphore::new(settings.max_connections.max(1)));
    let per_address = AddressSlots::new(settings.max_connections_per_address);
    let tarpit = Arc::new(Semaphore::new(TARPIT_SLOTS));
    let peer_timeout_ms = peer_timeout(settings.peer_timeout_ms);
    tokio::pin!(shutdown);
    loop {
        let (tcp, peer) = tokio::select! {
            // Retries transient accept errors (out of file descriptors…) itself.
            accepted = axum::serve::Listener::accept(&mut listener) => accepted,
            _ = &mut shutdown => break,
        };
        let Some(address_slot) = per_address.try_acquire(peer.ip()) else {
            // A client past its address's cap that reconnects at once would keep the accept
            // queue full, and other clients' new connections would wait in the kernel (a
            // dropped SYN is retried after a second). Its refusal waits a moment first, so
            // each of its loops reconnects about once a second; with no room left to wait,
            // the connection is closed at once without an answer.
            if let Ok(held) = tarpit.clone().try_acquire_owned() {
                tokio::spawn(async move {
                    tokio::time::sleep(TARPIT).await;
                    refuse_connection(tcp, Refused::ThisAddress).await;
                    drop(held);
                });
            }
            continue;
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            tokio::spawn(refuse_connection(tcp, Refused::Daemon));
            continue;
        };
        // Stream frames and answers are small writes: without TCP_NODELAY, Nagle's algorithm
        // holds one back until the previous is acknowledged (up to a delayed-ACK timeout).
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY");
        }
        if let Err(e) = watch_peer(&tcp, peer_timeout_ms) {
            tracing::debug!(error = %e, "cannot set the peer timeout");
        }
        // The client's address, for limits per address (failed authentications).
        let app = app.clone();
        let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
            // Before the router and its layers: refused before anything else runs.
            if head_over_limit(&req) {
                use axum::response::IntoResponse;
                return Either::Left(std::future::ready(Ok(
                    head_too_large_error().into_response()
                )));
            }
            req.extensions_mut().insert(ConnectInfo(peer));
            Either::Right(app.clone().oneshot(req.map(axum::body::Body::new)))
        });
        let io = TokioIo::new(ApiShapedHeadErrors::new(tcp));
        let connection = graceful.watch(http.serve_connection(io, service));
        tokio::spawn(async move {
            let _slots = (slot, address_slot);
            if let Err(e) = connection.await {
                tracing::trace!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// The peer timeout the kernel can take: 0 (the system's defaults), or between 1 s and an hour
/// (keepalive times are whole seconds; an hour is far past any client's own timeout). A value
/// outside is taken as the nearest, with a warning.
fn peer_timeout(configured_ms: u64) -> u64 {
    const RANGE: std::ops::RangeInclusive<u64> = 1_000..=3_600_000;
    if configured_ms == 0 || RANGE.contains(&configured_ms) {
        return configured_ms;
    }
    let taken = configured_ms.clamp(*RANGE.start(), *RANGE.end());
    tracing::warn!(
        "[server] peer_timeout_ms = {configured_ms} is outside 1000..=3600000; using {taken}"
    );
    taken
}

/// Drops a connection whose peer stopped answering after `timeout_ms`: data left
/// unacknowledged that long ends it (`TCP_USER_TIMEOUT`, Linux), and an idle connection is
/// probed from half of it on, three probes in the other half. Streams write a comment every
/// few seconds, so a subscriber that vanished from the network is noticed by the first; long
/// polls that write nothing by the probes. A client that stays connected but stops reading
/// while the daemon has more to send (its window closed) is dropped after it too; a stream
/// resumes from `Last-Event-ID`. 0 keeps the system's defaults.
pub fn watch_peer(tcp: &TcpStream, timeout_ms: u64) -> std::io::Result<()> {
    if timeout_ms == 0 {
        return Ok(());
    }
    let timeout = Duration::from_millis(timeout_ms);
    let socket = socket2::SockRef::from(tcp);
    #[cfg(target_os = "linux")]
    socket.set_tcp_user_timeout(Some(timeout))?;
    // The kernel counts keepalive times in whole seconds and refuses 0.
    let at_least_a_second = |d: Duration| d.max(Duration::from_secs(1));
    let keepalive = socket2::TcpKeepalive::new()
        .with_time(at_least_a_second(timeout / 2))
        .with_interval(at_least_a_second(timeout / 6));
    #[cfg(any(target_os = "linux", target_os = "macos", target_os = "freebsd"))]
    let keepalive = keepalive.with_retries(3);
    socket.set_tcp_keepalive(&keepalive)
}

/// The head's size as sent (request line, `Name: value` lines, blank line), refused past
/// [`MAX_HEAD_BYTES`]. hyper refuses heads only when they overflow its buffer, which a head
/// arriving in one read can exceed; this makes the documented limit the real one.
fn head_over_limit<B>(request: &Request<B>) -> bool {
    let line = request.method().as_str().len() + uri_len(request.uri()) + 12;
    let fields: usize = request
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum();
    line + fields + 2 > MAX_HEAD_BYTES
}

/// The target's length as written on the request line, without formatting it.
fn uri_len(uri: &axum::http::Uri) -> usize {
    let scheme = uri.scheme_str().map_or(0, |s| s.len() + "://".len());
    let authority = uri.authority().map_or(0, |a| a.as_str().len());
    let path = uri.path_and_query().map_or(0, |p| p.as_str().len());
    scheme + authority + path
}

fn head_too_large_error() -> ApiError {
    ApiError::new(
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        codes::HEAD_TOO_LARGE,
        format!(
            "the request head is larger than {} KiB or has more than {MAX_HEADERS} header fields",
            MAX_HEAD_BYTES / 1024
        ),
    )
}

/// Which cap a refused connection met.
enum Refused {
    Daemon,
    ThisAddress,
}

/// One connection too many: a 503 in the API's error shape, then close.
async fn refuse_connection(mut tcp: TcpStream, refused: Refused) {
    let message = match refused {
        Refused::Daemon => "the daemon has as many connections open as it accepts; retry shortly",
        Refused::ThisAddress => {
            "this address has as many connections open as the daemon accepts from one address \
             ([server] max_connections_per_address); close some or retry shortly"
        }
    };
    let error = ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        codes::TOO_MANY_CONNECTIONS,
        message,
    )
    .with_retry_after(1);
    let bytes = raw_response(error);
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        let _ = tcp.write_all(&bytes).await;
        let _ = tcp.shutdown().await;
    })
    .await;
}

/// An error as raw HTTP/1.1 bytes with `connection: close`, for answers written outside hyper.
fn raw_response(error: ApiError) -> Vec<u8> {
    let (status, retry_after) = (error.status, error.retry_after);
    let body = serde_json::to_vec(&ErrorBody {
        error: ErrorInfo {
            code: error.code.to_string(),
            message: error.message,
            details: error.details,
        },
    })
    .unwrap_or_default();
    let mut head = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or(""),
        body.len()
    );
    if let Some(secs) = retry_after {
        head.push_str(&format!("retry-after: {secs}\r\n"));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(&body);
    bytes
}

/// hyper answers a request head it cannot take (too large, too many fields) itself, with an
/// empty 431. This writer replaces that answer with the API's error shape, so every error a
/// client sees has one form. It recognises hyper's answer by its status line and empty body;
/// the API itself never answers 431.
struct ApiShapedHeadErrors<T> {
    inner: T,
    /// Bytes still to write in place of what hyper wrote.
    replacement: Option<(Vec<u8>, usize)>,
}

impl<T> ApiShapedHeadErrors<T> {
    fn new(inner: T) -> Self {
        ApiShapedHeadErrors {
            inner,
            replacement: None,
        }
    }
}

const HYPER_431: &[u8] = b"HTTP/1.1 431 ";

fn head_too_large() -> Vec<u8> {
    raw_response(head_too_large_error())
}

impl<T: AsyncWrite + Unpin> ApiShapedHeadErrors<T> {
    /// Writes what is left of the replacement; ready once all of it is written.
    fn poll_replacement(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while let Some((bytes, written)) = &mut self.replacement {
            if *written == bytes.len() {
                break;
            }
            let n =
                std::task::ready!(Pin::new(&mut self.inner).poll_write(cx, &bytes[*written..]))?;
            if n == 0 {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            *written += n;
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for ApiShapedHeadErrors<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for ApiShapedHeadErrors<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if self.replacement.is_some() {
            // After hyper's 431 it only closes; swallow anything else.
            std::task::ready!(self.poll_replacement(cx))?;
            return Poll::Ready(Ok(buf.len()));
        }
        if buf.starts_with(HYPER_431) {
            self.replacement = Some((head_too_large(), 0));
            std::task::ready!(self.poll_replacement(cx))?;
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let total = bufs.iter().map(|b| b.len()).sum();
        let first = bufs.iter().find(|b| !b.is_empty());
        if self.replacement.is_some() || first.is_some_and(|b| b.starts_with(HYPER_431)) {
            if self.replacement.is_none() {
                self.replacement = Some((head_too_large(), 0));
            }
            std::task::ready!(self.poll_replacement(cx))?;
            return Poll::Ready(Ok(total));
        }
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        std::task::ready!(self.poll_replacement(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        std::task::ready!(self.poll_replacement(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::{peer_timeout, uri_len};

    #[test]
    fn a_peer_timeout_the_kernel_cannot_take_is_taken_as_the_nearest() {
        assert_eq!(peer_timeout(0), 0, "0 keeps the system's defaults");
        assert_eq!(peer_timeout(60_000), 60_000);
        assert_eq!(peer_timeout(1), 1_000);
        assert_eq!(peer_timeout(u64::MAX), 3_600_000);
    }

    #[test]
    fn a_targets_length_is_its_formatted_length() {
        for target in [
            "/v1/teams/qa/tasks?status=pending&limit=10",
            "/",
            "http://example.com:8080/path?q=1",
            "example.com:443",
            "*",
        ] {
            let uri: axum::http::Uri = target.parse().unwrap();
            assert_eq!(uri_len(&uri), uri.to_string().len(), "{target}");
        }
    }
}
