//! Test harness: a real `huddled` on `127.0.0.1:0` with its own data directory, plus a thin
//! HTTP helper for tests that check raw statuses and bodies.

pub mod bench;
pub mod cli;
pub mod clients;
pub mod http;
pub mod llm;
pub mod otlp_receiver;
pub mod pg;
pub mod pg_server;
pub mod pgbouncer;
pub mod process;
pub mod proxy;
pub mod python;
pub mod sse;
pub mod store;
pub mod webhook_receiver;

use huddle_daemon::config::Settings;
use huddle_daemon::DaemonError;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use http::{Api, Reply};

/// The admin token every test daemon uses.
pub const ADMIN: &str = "test-admin-token-0123456789abcdef";

/// A daemon running in this process on its own port and data directory.
pub struct TestDaemon {
    pub addr: SocketAddr,
    pub url: String,
    pub data_dir: PathBuf,
    /// The daemon's state, for tests that look inside (the hub's channels, the caches).
    pub state: huddle_daemon::http::AppState,
    /// What it was started with (a restart starts with the same).
    pub settings: Settings,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
    /// Keeps the temporary directory alive as long as the daemon (when we made it).
    _dir: Option<tempfile::TempDir>,
}

/// Settings for a test: fresh directory, fixed admin token, fast lease sweeps.
pub fn test_settings(data_dir: &Path) -> Settings {
    let mut s = Settings::default();
    s.server.data_dir = data_dir.to_path_buf();
    s.server.admin_token = ADMIN.into();
    s.tasks.lease_sweep_ms = 50;
    s.tasks.min_lease_ms = 50;
    s
}

impl TestDaemon {
    /// A daemon on a fresh temporary data directory.
    pub async fn start() -> TestDaemon {
        Self::start_with(|_| {}).await
    }

    /// A daemon on a fresh directory with settings adjusted by `tweak`.
    /// With `HUDDLE_TEST_BACKEND=postgres` the daemon stores in a fresh PostgreSQL database
    /// instead of SQLite, so the same HTTP tests cover both backends (`./scripts/test` runs the
    /// API tests both ways).
    pub async fn start_with(tweak: impl FnOnce(&mut Settings)) -> TestDaemon {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut settings = test_settings(dir.path());
        if std::env::var("HUDDLE_TEST_BACKEND").as_deref() == Ok("postgres") {
            settings.storage.backend = huddle_daemon::config::Backend::Postgres;
            settings.storage.database_url = pg::fresh_database().await;
            settings.storage.pool_size = 4;
        }
        tweak(&mut settings);
        let mut d = Self::start_on(settings).await;
        d._dir = Some(dir);
        d
    }

    /// A daemon with exactly these settings (the caller owns the data directory). A daemon that
    /// cannot start fails the test at once with its error.
    pub async fn start_on(settings: Settings) -> TestDaemon {
        Self::try_start_on(settings)
            .await
            .unwrap_or_else(|e| panic!("the test daemon did not start: {e}"))
    }

    /// Like [`TestDaemon::start_on`], but a start-up failure is returned, for tests of it.
    pub async fn try_start_on(settings: Settings) -> Result<TestDaemon, DaemonError> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind port 0");
        Self::serve(settings, listener).await
    }

    /// Builds the daemon here, so a start-up error surfaces at once, then serves it on a task.
    /// The listener is bound before this returns, so clients can connect straight away.
    async fn serve(
        settings: Settings,
        listener: tokio::net::TcpListener,
    ) -> Result<TestDaemon, DaemonError> {
        show_logs_when_asked();
        let addr = listener.local_addr().expect("local addr");
        let data_dir = settings.server.data_dir.clone();
        let kept = settings.clone();
        let built = huddle_daemon::build(settings).await?;
        let state = built.state.clone();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            huddle_daemon::serve(built, listener, async {
                let _ = stopped.await;
            })
            .await
            .expect("daemon served");
        });
        Ok(TestDaemon {
            addr,
            url: format!("http://{addr}"),
            data_dir,
            state,
            settings: kept,
            stop: Some(stop),
            task: Some(task),
            _dir: None,
        })
    }

    /// Stops gracefully and waits until the database is closed.
    pub async fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            tokio::time::timeout(Duration::from_secs(30), task)
                .await
                .expect("daemon stopped in time")
                .expect("daemon task");
        }
    }

    /// Stops, then starts again on the same data directory and the same address, so clients
    /// that were connected can reconnect.
    pub async fn restart(mut self) -> TestDaemon {
        self.stop().await;
        let settings = self.settings.clone();
        let listener = bind_again(self.addr).await;
        let mut d = Self::serve(settings, listener)
            .await
            .unwrap_or_else(|e| panic!("the test daemon did not restart: {e}"));
        d._dir = self._dir.take();
        d
    }

    pub fn admin(&self) -> Api {
        Api::new(&self.url, ADMIN)
    }

    /// A sample's value in `/metrics`, `name` with its labels as printed (e.g.
    /// `huddle_long_polls_waiting{kind="claim"}`), summed over matching lines; 0 when absent.
    pub async fn metric(&self, name: &str) -> f64 {
        let text = reqwest::Client::new()
            .get(format!("{}/metrics", self.url))
            .bearer_auth(ADMIN)
            .send()
            .await
            .expect("scrape /metrics")
            .text()
            .await
            .expect("the metrics text");
        text.lines()
            .filter_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
            .map(|value| value.trim().parse::<f64>().expect("a number"))
            .sum()
    }

    /// Creates a team and a coordinator in it; returns the coordinator's API.
    pub async fn team(&self, team: &str) -> Api {
        self.admin()
            .post("/v1/teams", serde_json::json!({ "name": team }))
            .await
            .expect_status(201);
        self.agent(team, "coordinator", "coordinator").await
    }

    /// Adds an agent through the admin token and returns an API with its token.
    pub async fn agent(&self, team: &str, name: &str, role: &str) -> Api {
        let reply = self
            .admin()
            .post(
                &format!("/v1/teams/{team}/agents"),
                serde_json::json!({ "name": name, "role": role }),
            )
            .await
            .expect_status(201);
        Api::new(&self.url, reply.body["token"].as_str().expect("token")).in_team(team)
    }
}

impl Drop for TestDaemon {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// With `TEST_LOG=1`, the in-process daemon's logs show in the test's output (`RUST_LOG`
/// filters them; `huddle_daemon=debug` by default). Installed once per test process.
fn show_logs_when_asked() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    if std::env::var_os("TEST_LOG").is_none_or(|v| v.is_empty() || v == "0") {
        return;
    }
    INSTALLED.call_once(|| {
        let filter = tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("huddle_daemon=debug"));
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_test_writer()
            .try_init();
    });
}

/// Binds `addr` again after a stop; the old socket may take a moment to be released.
async fn bind_again(addr: SocketAddr) -> tokio::net::TcpListener {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => return l,
            Err(e) => assert!(
                tokio::time::Instant::now() < deadline,
                "cannot bind {addr} again: {e}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Polls `check` until it returns true, failing the test after `secs` seconds. For waiting on
/// conditions, never as a timing assertion.
pub async fn eventually<F, Fut>(secs: u64, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
