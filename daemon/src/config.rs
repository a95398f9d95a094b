//! Settings: defaults, then the config file, then `HUDDLE_…` environment variables, then flags.
//!
//! Every key `section.key` can be set by `HUDDLE_SECTION_KEY` (for example
//! `HUDDLE_TASKS_DEFAULT_LEASE_MS`); the `[server]` keys also by `HUDDLE_KEY` alone
//! (`HUDDLE_LISTEN`, `HUDDLE_DATA_DIR`, `HUDDLE_ADMIN_TOKEN`). So `HUDDLE_METRICS_LISTEN` and
//! `HUDDLE_LOG_FORMAT` set `[metrics] listen` and `[log] format`.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

mod limits;
mod load;
mod unknown_env;
pub use limits::LimitSettings;
pub use load::ConfigError;
pub use unknown_env::unknown_env_vars;

/// Which database holds the teams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// One file in the data directory; one daemon.
    Sqlite,
    /// A PostgreSQL database shared by any number of daemons.
    Postgres,
}

impl Backend {
    /// The name in `[storage] backend`, which is also the backend's cargo feature.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

/// SQLite's `synchronous` setting: FULL survives power loss; NORMAL may lose the last commits
/// on power loss (never on a process crash) and is faster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Synchronous {
    Full,
    Normal,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    pub server: ServerSettings,
    pub storage: StorageSettings,
    pub tasks: TaskSettings,
    pub memory: MemorySettings,
    pub history: HistorySettings,
    pub streams: StreamSettings,
    pub limits: LimitSettings,
    pub metrics: MetricsSettings,
    pub log: LogSettings,
    pub retention: RetentionSettings,
    pub webhooks: WebhookSettings,
    pub telemetry: TelemetrySettings,
    /// The code-developer model, read by workers (`huddle worker --config`), not the daemon;
    /// accepted here so one file can configure both.
    #[serde(skip_serializing_if = "toml::Table::is_empty")]
    pub llm: toml::Table,
    /// Fix-cycle thresholds for workers, like `llm`.
    #[serde(skip_serializing_if = "toml::Table::is_empty")]
    pub cycles: toml::Table,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerSettings {
    pub listen: String,
    pub data_dir: PathBuf,
    /// Empty: read from (or generate into) `<data_dir>/admin-token`.
    pub admin_token: String,
    pub max_body_bytes: usize,
    /// Time a connection has to send a complete request head, counted from when it waits for
    /// one, so an idle keep-alive connection is closed after it too.
    pub head_timeout_ms: u64,
    /// Open connections at most; one more is answered 503 and closed.
    pub max_connections: usize,
    /// Open connections from one client address at most (an IPv6 client counts by its /64), so
    /// one client reconnecting in a loop cannot take every slot; 0 for no such cap. Behind a
    /// reverse proxy every connection comes from the proxy: raise it to `max_connections`.
    pub max_connections_per_address: usize,
    /// How long a peer may go silent before its connection is dropped: what the daemon sent
    /// stays unacknowledged this long (`TCP_USER_TIMEOUT`), or an idle connection answers no
    /// keepalive probe within it. A client that vanished from the network (a laptop closed, a
    /// NAT that forgot it) would otherwise hold its stream slots until TCP gives up, about
    /// 15 minutes. A client that stops reading while the daemon has more to send is dropped
    /// after it too. 1,000 to 3,600,000, or 0: the operating system's defaults.
    pub peer_timeout_ms: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StorageSettings {
    /// `sqlite` (the default: one file in the data directory, one daemon) or `postgres`
    /// (several daemons sharing one database, `database_url`).
    pub backend: Backend,
    /// `postgres://user:password@host:port/database`; also `HUDDLE_DATABASE_URL`, which
    /// selects the postgres backend by itself.
    pub database_url: String,
    /// PostgreSQL: a direct connection to the same database for LISTEN and migrations, when
    /// `database_url` goes through a pooler in transaction mode (pgbouncer); then the pooled
    /// connections use no named prepared statements. Empty: `database_url` is direct.
    pub direct_database_url: String,
    /// PostgreSQL connections per daemon, its LISTEN connection among them (the health probe
    /// opens one more, heartbeat marks two).
    pub pool_size: u32,
    /// PostgreSQL: the longest wait for a pooled connection before a request is answered 503.
    pub acquire_timeout_ms: u64,
    /// PostgreSQL: the health probe's timeout (and `/readyz`'s); a database that twice in a
    /// row does not answer within it (or refuses) counts as unreachable and requests are
    /// answered 503 at once.
    pub health_timeout_ms: u64,
    pub synchronous: Synchronous,
    pub read_connections: usize,
    pub max_batch: usize,
    /// PostgreSQL: how many batches of one team a replica runs at once (each on its own
    /// connection); claims and completions of a team proceed side by side in them. 1 (the
    /// default): more batches are smaller, and measured slower on a CPU-bound machine.
    pub batches_per_team: usize,
    /// Apply missing migrations at start-up. `false` (`huddled --no-migrate`): only check,
    /// and refuse a schema older than this release (run `huddled migrate` first).
    pub migrate: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TaskSettings {
    pub default_lease_ms: u64,
    pub max_lease_ms: u64,
    pub min_lease_ms: u64,
    pub max_wait_ms: u64,
    /// The longest wait over MCP, kept below the 60 s after which MCP clients (the TypeScript
    /// SDK, Claude Code) give up on a request.
    pub mcp_max_wait_ms: u64,
    /// The lease of a claim made over MCP without `leaseMs`: an LLM's step, minutes long
    /// (within `min_lease_ms`..`max_lease_ms`). Any tool call of the holder renews it.
    pub mcp_default_lease_ms: u64,
    pub default_max_attempts: i64,
    pub lease_sweep_ms: u64,
    /// How long a holder's question (`POST …/tasks/{id}/ask`) keeps its task, for a team that
    /// sets no `questions.maxWaitMinutes`: past it the question's default decision applies.
    pub max_question_wait_minutes: u64,
    /// Task id prefixes (`TEST`, `QARUN`) whose tasks complete only with evidence the daemon
    /// checks in its own test history (`http/evidence.rs`), as a task's metadata
    /// `requireEvidence: true` asks for one task. Empty: only tasks that ask.
    pub evidence_prefixes: Vec<String>,
    /// The pass rate a task's evidence run must reach when the task's `cycle.qualityGate` does
    /// not say (the workers' default gate).
    pub evidence_quality_gate: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemorySettings {
    pub max_bytes: usize,
    pub history_limit: usize,
}

/// `[history]`: the test history workers post (`/v1/teams/{team}/history`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HistorySettings {
    /// Runs kept per project; posting one more deletes the oldest in the same transaction.
    pub runs_per_project: usize,
    /// Projects per team; a run for one more project is refused (400).
    pub max_projects: usize,
}

impl Default for HistorySettings {
    fn default() -> Self {
        HistorySettings {
            runs_per_project: 50,
            max_projects: 100,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StreamSettings {
    pub keepalive_secs: u64,
    pub buffer: usize,
}

/// `[retention]`: what is deleted in the background, and how fast. `0` keeps everything of
/// that kind (the default). Counts are per team.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetentionSettings {
    /// How often a round runs, in milliseconds.
    pub every_ms: u64,
    /// The most rows of one kind (per team on PostgreSQL) one write deletes.
    pub batch: usize,
    pub finished_tasks_max_age_hours: u64,
    /// Finished tasks kept per team, the most recently updated (0: no cap).
    pub finished_tasks_per_team: u64,
    pub messages_max_age_hours: u64,
    pub messages_per_team: u64,
    pub events_max_age_hours: u64,
    pub events_per_team: u64,
    pub test_runs_max_age_hours: u64,
    /// Test-history runs kept per team, the newest, all projects together (0: no cap).
    pub test_runs_per_team: u64,
}

impl Default for RetentionSettings {
    fn default() -> Self {
        RetentionSettings {
            every_ms: 60_000,
            batch: 500,
            finished_tasks_max_age_hours: 0,
            finished_tasks_per_team: 0,
            messages_max_age_hours: 0,
            messages_per_team: 0,
            events_max_age_hours: 0,
            events_per_team: 0,
            test_runs_max_age_hours: 0,
            test_runs_per_team: 0,
        }
    }
}

/// `[webhooks]`: outbound notices of a team's events (`crate::webhooks`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebhookSettings {
    /// Whether this daemon sends webhooks (with several replicas, any may; a lease per webhook
    /// says which one does).
    pub enabled: bool,
    /// Allow URLs on loopback, private, link-local and other non-public addresses. Off by
    /// default: a coordinator's webhook must not reach the daemon's own network.
    pub allow_private: bool,
    /// Webhooks one team may register.
    pub max_per_team: usize,
    /// Attempts per notification before it is logged as failed.
    pub attempts: u32,
    /// The wait before the second attempt, in milliseconds; it doubles after each attempt.
    pub retry_base_ms: u64,
    /// How long one attempt may take, in milliseconds.
    pub timeout_ms: u64,
    /// How often new messages and events are looked at, in milliseconds.
    pub poll_ms: u64,
    /// Deliveries kept in each webhook's log.
    pub keep_deliveries: usize,
    /// The address people open huddle at (`https://huddle.example.com`): a notice about a
    /// question links to it in the dashboard. Empty: notices carry no link.
    pub public_url: String,
}

impl Default for WebhookSettings {
    fn default() -> Self {
        WebhookSettings {
            enabled: true,
            allow_private: false,
            max_per_team: 10,
            attempts: 5,
            retry_base_ms: 1_000,
            timeout_ms: 10_000,
            poll_ms: 1_000,
            keep_deliveries: 200,
            public_url: String::new(),
        }
    }
}

/// `[metrics]`: where Prometheus scrapes `/metrics`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MetricsSettings {
    /// Empty: `/metrics` on the API's address, for the admin token. An address: `/metrics`
    /// there, without a token (keep it private), and not on the API's address.
    pub listen: String,
}

/// `[telemetry]`: OpenTelemetry traces (docs/telemetry.md).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TelemetrySettings {
    /// The OTLP/HTTP collector's base URL (`http://collector:4318`; spans go to its
    /// `/v1/traces`). Empty: the standard `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`, and without those no traces.
    pub otlp_endpoint: String,
}

/// `[log]`: how `huddled` writes its log (to stderr; `HUDDLE_LOG` filters it).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogSettings {
    pub format: LogFormat,
}

/// `text` for people, `json` for log pipelines: one object per line, each request's id in it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            listen: "127.0.0.1:7700".into(),
            data_dir: PathBuf::from("./huddle-data"),
            admin_token: String::new(),
            max_body_bytes: 1024 * 1024,
            head_timeout_ms: 30_000,
            max_connections: 4_096,
            max_connections_per_address: 1_024,
            peer_timeout_ms: 60_000,
        }
    }
}

impl Default for StorageSettings {
    fn default() -> Self {
        StorageSettings {
            backend: Backend::Sqlite,
            database_url: String::new(),
            direct_database_url: String::new(),
            pool_size: 16,
            acquire_timeout_ms: 5_000,
            health_timeout_ms: 1_000,
            synchronous: Synchronous::Full,
            read_connections: 4,
            max_batch: 512,
            batches_per_team: 1,
            migrate: true,
        }
    }
}

impl Default for TaskSettings {
    fn default() -> Self {
        TaskSettings {
            default_lease_ms: 30_000,
            max_lease_ms: 3_600_000,
            min_lease_ms: 100,
            max_wait_ms: 60_000,
            mcp_max_wait_ms: 25_000,
            mcp_default_lease_ms: 600_000,
            default_max_attempts: 3,
            lease_sweep_ms: 500,
            max_question_wait_minutes: 24 * 60,
            evidence_prefixes: Vec::new(),
            evidence_quality_gate: 95.0,
        }
    }
}

impl Default for MemorySettings {
    fn default() -> Self {
        MemorySettings {
            max_bytes: 1024 * 1024,
            history_limit: 100,
        }
    }
}

impl Default for StreamSettings {
    fn default() -> Self {
        StreamSettings {
            keepalive_secs: 15,
            buffer: 1024,
        }
    }
}

impl Settings {
    pub fn database_path(&self) -> PathBuf {
        self.server.data_dir.join("huddle.db")
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
