//! The accept loop. It does what `axum::serve` does, plus two connection settings axum does not
//! expose: `TCP_NODELAY`, and a bound on what hyper buffers per connection.
//!
//! The bound matters for streams: hyper keeps polling a response body until its write buffer
//! holds `max_buf_size` bytes (about 400 KB by default), so every subscriber that stops reading
//! would pin that much memory. With a small bound a stuck stream stops being polled early, its
//! hub receiver falls behind the bounded channel, and it costs almost nothing until it reads
//! again (then it catches up from the database).

use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper::Request;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use std::future::Future;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// Bytes hyper may buffer per connection, reading or writing (hyper's minimum is 8 KiB).
/// Request heads must fit (larger ones get 431); bodies and answers pass through in pieces.
const MAX_BUFFERED_PER_CONNECTION: usize = 32 * 1024;

/// Serves `app` until `shutdown` completes, then stops accepting, asks every connection to
/// finish its current exchange, and returns once all have closed.
pub async fn serve(mut listener: TcpListener, app: Router, shutdown: impl Future<Output = ()>) {
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.max_buf_size(MAX_BUFFERED_PER_CONNECTION);
    tokio::pin!(shutdown);
    loop {
        let (tcp, peer) = tokio::select! {
            // Retries transient accept errors (out of file descriptors…) itself.
            accepted = axum::serve::Listener::accept(&mut listener) => accepted,
            _ = &mut shutdown => break,
        };
        // Stream frames and answers are small writes: without TCP_NODELAY, Nagle's algorithm
        // holds one back until the previous is acknowledged (up to a delayed-ACK timeout).
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY");
        }
        // The client's address, for limits per address (failed authentications).
        let app = app.clone();
        let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo(peer));
            app.clone().oneshot(req.map(axum::body::Body::new))
        });
        let connection = graceful.watch(http.serve_connection(TokioIo::new(tcp), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::trace!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}
