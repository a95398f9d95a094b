//! `huddled`: parse flags, load settings, log, and serve until SIGINT/SIGTERM.

use clap::Parser;
use huddle_daemon::config::{LogFormat, Settings};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "huddled",
    version,
    about = "huddle coordination daemon: shared tasks, message bus and memory for agent teams"
)]
struct Flags {
    /// Address to listen on [env: HUDDLE_LISTEN] [default: 127.0.0.1:7700]
    #[arg(long)]
    listen: Option<String>,
    /// Directory for the database and the admin token [env: HUDDLE_DATA_DIR] [default: ./huddle-data]
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Config file (see config/huddle.toml for every setting)
    #[arg(long, env = "HUDDLE_CONFIG")]
    config: Option<PathBuf>,
}

/// See the workspace manifest: the writer thread frees what request tasks allocated and back.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main]
async fn main() -> ExitCode {
    let flags = Flags::parse();
    let mut settings = match Settings::load(flags.config.as_deref(), |k| std::env::var(k).ok()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("huddled: {e}");
            return ExitCode::from(2);
        }
    };
    init_logging(settings.log.format);
    if let Some(listen) = flags.listen {
        settings.server.listen = listen;
    }
    if let Some(dir) = flags.data_dir {
        settings.server.data_dir = dir;
    }
    let listener = match tokio::net::TcpListener::bind(&settings.server.listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("huddled: cannot listen on {}: {e}", settings.server.listen);
            return ExitCode::from(2);
        }
    };
    match huddle_daemon::run(settings, listener, shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("huddled: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Logs to stderr, filtered by `HUDDLE_LOG`: text for people, or one JSON object per line
/// with the current span (a request's id, method and path) flattened in.
fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("HUDDLE_LOG")
        // rmcp logs every MCP call at INFO (three lines per call): per-call detail is for debugging.
        .unwrap_or_else(|_| "info,tower_http=warn,rmcp=warn".into());
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter);
    match format {
        LogFormat::Text => builder
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .init(),
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
