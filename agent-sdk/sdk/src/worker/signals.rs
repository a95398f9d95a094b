//! SIGINT and SIGTERM as a cancellation token.

use tokio_util::sync::CancellationToken;

/// A token cancelled at the first SIGINT (Ctrl-C) or SIGTERM. The handlers are installed
/// before this returns, so a signal that arrives right after is not missed. Must be called
/// inside a Tokio runtime.
pub fn shutdown_on_signals() -> CancellationToken {
    let token = CancellationToken::new();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).ok();
        let mut int = signal(SignalKind::interrupt()).ok();
        let fire = token.clone();
        tokio::spawn(async move {
            let name = tokio::select! {
                Some(()) = recv(&mut term) => "SIGTERM",
                Some(()) = recv(&mut int) => "SIGINT",
                else => return,
            };
            tracing::info!("{name} received: stopping");
            fire.cancel();
        });
    }
    #[cfg(not(unix))]
    {
        let fire = token.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                tracing::info!("Ctrl-C received: stopping");
                fire.cancel();
            }
        });
    }
    token
}

#[cfg(unix)]
async fn recv(s: &mut Option<tokio::signal::unix::Signal>) -> Option<()> {
    match s {
        Some(s) => s.recv().await,
        None => None,
    }
}
