//! The typed huddle client: one async method per endpoint, the daemon's wire types in and out,
//! errors as [`Error`].
//!
//! Calls that are safe to repeat — reads, claims, heartbeats, and message posts (which always
//! carry an idempotency key the client generates) — are retried with exponential backoff and
//! jitter when the daemon is unreachable or busy; everything else is sent once. When the daemon
//! stays down, calls end with [`Error::Unreachable`] after about a second instead of hanging.
//!
//! Streams ([`Client::stream_messages`], [`Client::stream_events`]) reconnect by themselves
//! with `Last-Event-ID`, so they neither lose nor repeat an item across daemon restarts.
//!
//! Several daemons (replicas of one PostgreSQL database) can be given as one comma-separated
//! URL (`http://a:7700,http://b:7700`, also in `HUDDLE_URL`): a call that cannot connect to
//! one is sent to the next at once (it never reached a daemon, so any call may be sent again),
//! and the client keeps using the one that answered.
//!
//! # Example
//!
//! ```no_run
//! use huddle_sdk::wire::{NewTask, PostMessage};
//! use huddle_sdk::Client;
//!
//! # async fn demo() -> Result<(), huddle_sdk::Error> {
//! let client = Client::builder("http://127.0.0.1:7700")
//!     .token("the coordinator's token")
//!     .team("qa")
//!     .build()?;
//! let task = client
//!     .create_task(&NewTask {
//!         prefix: Some("TEST".into()),
//!         subject: "run the unit tests".into(),
//!         ..NewTask::default()
//!     })
//!     .await?;
//! println!("created {} ({})", task.id, task.status);
//! client
//!     .post_message(&PostMessage {
//!         to: "*".into(),
//!         kind: "impl_progress".into(),
//!         summary: format!("queued {}", task.id),
//!         data: serde_json::json!({}),
//!     })
//!     .await?;
//! match client.get_task("TEST-999").await {
//!     Err(e) if e.is_not_found() => println!("no such task: {e}"),
//!     other => println!("{other:?}"),
//! }
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

mod error;
mod gates;
mod memory;
mod messages;
mod queries;
mod retry;
mod spend;
mod stream;
mod tasks;
mod team_admin;
mod teams;
mod test_history;
mod transport;
mod webhooks;

pub use error::{ApiError, Error};
pub use messages::Posted;
pub use queries::{MessageQuery, MessageSearch, StreamOptions, TaskQuery};
pub use retry::{Backoff, RetryPolicy};
pub use stream::Subscription;

use reqwest::Url;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A handle on one daemon for one identity (token) and, usually, one team. Cheap to clone;
/// clones share the connection pool.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
    /// The team of `/v1/teams/{team}/…` calls; set per clone so one pool serves many teams.
    team: Option<Arc<str>>,
}

/// What every clone shares.
struct Inner {
    http: reqwest::Client,
    /// The daemons, in the order given; calls go to `bases[current]`.
    bases: Vec<Url>,
    current: AtomicUsize,
    token: Option<String>,
    retry: RetryPolicy,
    /// Per-call timeout; long polls add their wait on top, streams use an idle timeout instead.
    timeout: Duration,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("url", &self.base_url().as_str())
            .field("team", &self.team)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client for the daemon at `url` with a bearer `token` and default settings; set the
    /// team with [`Client::with_team`].
    pub fn new(url: &str, token: &str) -> Result<Client, Error> {
        Client::builder(url).token(token).build()
    }

    /// Starts configuring a client for the daemon at `url` (such as `http://127.0.0.1:7700`).
    pub fn builder(url: &str) -> ClientBuilder {
        ClientBuilder {
            url: url.to_string(),
            token: None,
            team: None,
            retry: RetryPolicy::default(),
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
        }
    }

    /// The same client working in `team`.
    pub fn with_team(&self, team: &str) -> Client {
        Client {
            inner: self.inner.clone(),
            team: Some(team.into()),
        }
    }

    /// The same daemon, pool and team, but acting as another identity (`token`).
    pub fn with_token(&self, token: &str) -> Client {
        Client {
            inner: Arc::new(Inner {
                http: self.inner.http.clone(),
                bases: self.inner.bases.clone(),
                current: AtomicUsize::new(self.inner.current.load(Ordering::Relaxed)),
                token: Some(token.to_string()),
                retry: self.inner.retry,
                timeout: self.inner.timeout,
            }),
            team: self.team.clone(),
        }
    }

    /// The team this client works in, if one was set.
    pub fn team(&self) -> Option<&str> {
        self.team.as_deref()
    }

    /// The base URL of the daemon calls go to now (the first given, or the one that answered
    /// after a failover).
    pub fn base_url(&self) -> &Url {
        &self.inner.bases[self.inner.current.load(Ordering::Relaxed) % self.inner.bases.len()]
    }

    /// Every daemon URL given, in order.
    pub fn base_urls(&self) -> &[Url] {
        &self.inner.bases
    }

    /// Moves to the next daemon after `failed` (the base a call could not connect to), unless
    /// another call already moved on. Returns whether there is another daemon at all.
    pub(crate) fn fail_over(&self, failed: &Url) -> bool {
        let n = self.inner.bases.len();
        if n < 2 {
            return false;
        }
        let at = self.inner.current.load(Ordering::Relaxed) % n;
        if &self.inner.bases[at] == failed {
            let next = (at + 1) % n;
            let _ =
                self.inner
                    .current
                    .compare_exchange(at, next, Ordering::Relaxed, Ordering::Relaxed);
            tracing::warn!(
                "cannot connect to {}; using {}",
                failed.as_str().trim_end_matches('/'),
                self.inner.bases[next].as_str().trim_end_matches('/')
            );
        }
        true
    }

    /// `url` (made with the first base, as every call's URL is) on the daemon in use now.
    pub(crate) fn on_current(&self, url: &Url) -> Url {
        let (first, now) = (&self.inner.bases[0], self.base_url());
        if first == now {
            return url.clone();
        }
        match url.as_str().strip_prefix(first.as_str()) {
            Some(rest) => now.join(rest).unwrap_or_else(|_| url.clone()),
            None => url.clone(),
        }
    }

    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.inner.http
    }

    pub(crate) fn token(&self) -> Option<&str> {
        self.inner.token.as_deref()
    }

    pub(crate) fn retry_policy(&self) -> RetryPolicy {
        self.inner.retry
    }

    pub(crate) fn timeout(&self) -> Duration {
        self.inner.timeout
    }

    /// The first base + the given path segments, each percent-encoded ([`Client::on_current`]
    /// moves it to the daemon in use when the call is sent).
    pub(crate) fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.inner.bases[0].clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        url
    }

    /// `/v1/teams/{team}/` + `rest`; an error when no team is set.
    pub(crate) fn team_url(&self, rest: &[&str]) -> Result<Url, Error> {
        let team = self.team.as_deref().ok_or(Error::NoTeam)?;
        let mut segments = vec!["v1", "teams", team];
        segments.extend_from_slice(rest);
        Ok(self.url(&segments))
    }
}

/// Configures a [`Client`]; start with [`Client::builder`].
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    url: String,
    token: Option<String>,
    team: Option<String>,
    retry: RetryPolicy,
    timeout: Duration,
    connect_timeout: Duration,
}

impl ClientBuilder {
    /// The bearer token: an agent's, or the admin token for creating teams.
    pub fn token(mut self, token: &str) -> Self {
        self.token = Some(token.to_string());
        self
    }

    /// The team for `/v1/teams/{team}/…` calls.
    pub fn team(mut self, team: &str) -> Self {
        self.team = Some(team.to_string());
        self
    }

    /// How calls that are safe to repeat are retried (default: 4 tries over about a second).
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// The longest a call may take, long-poll waits excluded (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The longest a TCP connection may take to open (default 5 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Checks the URL (or comma-separated URLs) and builds the client.
    pub fn build(self) -> Result<Client, Error> {
        let bases = self
            .url
            .split(',')
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(parse_base)
            .collect::<Result<Vec<Url>, Error>>()?;
        if bases.is_empty() {
            return Err(Error::Config("no daemon URL given".into()));
        }
        let http = reqwest::Client::builder()
            .connect_timeout(self.connect_timeout)
            .build()
            .map_err(|e| Error::Config(format!("cannot set up HTTP: {e}")))?;
        Ok(Client {
            inner: Arc::new(Inner {
                http,
                bases,
                current: AtomicUsize::new(0),
                token: self.token.filter(|t| !t.is_empty()),
                retry: self.retry,
                timeout: self.timeout,
            }),
            team: self.team.map(Into::into),
        })
    }
}

/// One daemon URL: http or https, usable as a base. A path is kept, with a trailing slash so
/// joined paths stay under it.
fn parse_base(url: &str) -> Result<Url, Error> {
    let mut base =
        Url::parse(url).map_err(|e| Error::Config(format!("invalid daemon URL {url:?}: {e}")))?;
    if !matches!(base.scheme(), "http" | "https") || base.cannot_be_a_base() {
        return Err(Error::Config(format!(
            "invalid daemon URL {url:?}: expected http://host:port or https://host:port"
        )));
    }
    if !base.path().ends_with('/') {
        let path = format!("{}/", base.path());
        base.set_path(&path);
    }
    Ok(base)
}
