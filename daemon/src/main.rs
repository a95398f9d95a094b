//! `huddled`: parse flags, load settings, log, and serve until SIGINT/SIGTERM.

use clap::{Parser, Subcommand};
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
    #[arg(long, global = true)]
    data_dir: Option<PathBuf>,
    /// Config file (see config/huddle.toml for every setting)
    #[arg(long, env = "HUDDLE_CONFIG", global = true)]
    config: Option<PathBuf>,
    /// Do not apply migrations; refuse to start on a schema older than this release
    /// (replicas during a rolling upgrade; see `huddled migrate`) [config: storage.migrate]
    #[arg(long)]
    no_migrate: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

/// Without a command, `huddled` serves.
#[derive(Debug, Subcommand)]
enum Command {
    /// Apply the database's missing migrations and exit (once per upgrade, before the replicas).
    Migrate,
    /// Copy the SQLite database to a new file, consistently, while the daemon runs.
    Backup {
        /// The file to write (must not exist); restore by making it the data directory's huddle.db.
        #[arg(long)]
        to: PathBuf,
    },
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
    let otlp = Some(settings.telemetry.otlp_endpoint.as_str());
    match huddle_telemetry::start("huddled", otlp) {
        Ok(Some(url)) => tracing::info!("exporting traces to {url}"),
        Ok(None) => {}
        Err(e) => {
            eprintln!("huddled: telemetry: {e}");
            return ExitCode::from(2);
        }
    }
    let unknown = huddle_daemon::config::unknown_env_vars(
        std::env::vars_os().filter_map(|(k, _)| k.into_string().ok()),
    );
    if !unknown.is_empty() {
        tracing::warn!(
            "ignoring {}: not a setting (settings are HUDDLE_<SECTION>_<KEY>, as in config/huddle.toml)",
            unknown.join(", ")
        );
    }
    if let Some(listen) = flags.listen {
        settings.server.listen = listen;
    }
    if let Some(dir) = flags.data_dir {
        settings.server.data_dir = dir;
    }
    if flags.no_migrate {
        settings.storage.migrate = false;
    }
    match flags.command {
        Some(Command::Migrate) => return migrate(&settings).await,
        Some(Command::Backup { to }) => return backup(&settings, &to).await,
        None => {}
    }
    let listener = match tokio::net::TcpListener::bind(&settings.server.listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("huddled: cannot listen on {}: {e}", settings.server.listen);
            return ExitCode::from(2);
        }
    };
    let served = huddle_daemon::run(settings, listener, shutdown_signal()).await;
    huddle_telemetry::shutdown().await;
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("huddled: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn migrate(settings: &Settings) -> ExitCode {
    match huddle_daemon::store::open::migrate(settings).await {
        Ok(state) => {
            huddle_daemon::store::schema::log(&state);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("huddled migrate: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn backup(settings: &Settings, to: &std::path::Path) -> ExitCode {
    match huddle_daemon::store::open::backup(settings, to).await {
        Ok(()) => {
            tracing::info!(
                "backed up {} to {}",
                settings.database_path().display(),
                to.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("huddled backup: {e}");
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

/// Resolves on SIGINT or SIGTERM. The handlers are installed when this is called, not when the
/// future is first polled: the "listening on" line is printed before the server polls it, and a
/// signal in between would otherwise take the default action and kill the process uncleanly.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let interrupt = signal(SignalKind::interrupt());
        let terminate = signal(SignalKind::terminate());
        async move {
            match (interrupt, terminate) {
                (Ok(mut interrupt), Ok(mut terminate)) => {
                    tokio::select! {
                        _ = interrupt.recv() => {},
                        _ = terminate.recv() => {},
                    }
                }
                _ => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}
