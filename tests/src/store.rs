//! Shared setup for the store contract tests: one fresh store per backend, teams, agents.
use huddle_daemon::hub::Hub;
use huddle_daemon::store::postgres::{PostgresOptions, PostgresStore};
use huddle_daemon::store::sqlite::{SqliteOptions, SqliteStore, Synchronous};
use huddle_daemon::store::{Caller, Store};
use huddle_sdk::wire::{NewTask, Role};
use std::sync::Arc;

/// What keeps a backend's data alive for the test: a temporary directory (SQLite), the
/// pgbouncer in front of PostgreSQL, or nothing (each PostgreSQL store has its own fresh
/// database on the test server).
pub type Keep = Option<Box<dyn std::any::Any + Send>>;

/// One fresh store per backend: SQLite in a temporary directory, PostgreSQL in a fresh
/// database, and PostgreSQL through pgbouncer in transaction mode (every statement through
/// two shared server connections, LISTEN and migrations on a direct URL). Every store contract
/// test runs on all three; `HUDDLE_TEST_STORE=sqlite` asks for SQLite alone while working
/// without a PostgreSQL server (refused under `CI=true`, where all always run).
pub async fn backends() -> Vec<(Arc<dyn Store>, Keep)> {
    if std::env::var("HUDDLE_TEST_STORE").as_deref() == Ok("sqlite") {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "HUDDLE_TEST_STORE=sqlite leaves PostgreSQL out; CI runs every backend"
        );
        return vec![sqlite().await];
    }
    vec![sqlite().await, postgres().await, postgres_pooled().await]
}

pub async fn sqlite() -> (Arc<dyn Store>, Keep) {
    sqlite_with(Arc::new(Hub::new(64))).await
}

/// A SQLite store publishing to `hub`.
pub async fn sqlite_with(hub: Arc<Hub>) -> (Arc<dyn Store>, Keep) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(
        SqliteOptions {
            path: dir.path().join("huddle.db"),
            synchronous: Synchronous::Full,
            read_connections: 2,
            max_batch: 64,
            default_max_attempts: 2,
            memory_max_bytes: 4096,
            memory_history_limit: 3,
            history: huddle_daemon::config::HistorySettings {
                runs_per_project: 4,
                max_projects: 3,
            },
            limits: huddle_daemon::config::LimitSettings::default(),
            migrate: true,
            outage_lease_grace_ms: 30_000,
        },
        hub,
    )
    .unwrap();
    (Arc::new(store), Some(Box::new(dir)))
}

/// A PostgreSQL store on a fresh database, with the same options as [`sqlite`].
pub async fn postgres() -> (Arc<dyn Store>, Keep) {
    postgres_on(&crate::pg::fresh_database().await, Arc::new(Hub::new(64))).await
}

/// A PostgreSQL store on a fresh database through pgbouncer in transaction mode, with a
/// direct URL for LISTEN and migrations.
pub async fn postgres_pooled() -> (Arc<dyn Store>, Keep) {
    let direct = crate::pg::fresh_database().await;
    let parsed = reqwest::Url::parse(&direct).unwrap();
    let bouncer =
        crate::pgbouncer::PgBouncer::start_sized(parsed.port().unwrap(), "transaction", 2);
    let pooled = bouncer.url(parsed.path().trim_start_matches('/'));
    let (store, _) = postgres_through(&pooled, Some(&direct), Arc::new(Hub::new(64))).await;
    (store, Some(Box::new(bouncer)))
}

/// A PostgreSQL store (a replica) on an existing database, feeding `hub`.
pub async fn postgres_on(url: &str, hub: Arc<Hub>) -> (Arc<dyn Store>, Keep) {
    postgres_through(url, None, hub).await
}

/// A PostgreSQL store on `url`, with `direct` for LISTEN and migrations when `url` is a pooler.
async fn postgres_through(
    url: &str,
    direct: Option<&str>,
    hub: Arc<Hub>,
) -> (Arc<dyn Store>, Keep) {
    let store = PostgresStore::open(
        PostgresOptions {
            url: url.to_string(),
            direct_url: direct.map(str::to_string),
            pool_size: 4,
            max_batch: 64,
            batches_per_team: 2,
            default_max_attempts: 2,
            memory_max_bytes: 4096,
            memory_history_limit: 3,
            history: huddle_daemon::config::HistorySettings {
                runs_per_project: 4,
                max_projects: 3,
            },
            limits: huddle_daemon::config::LimitSettings::default(),
            migrate: true,
            acquire_timeout: std::time::Duration::from_secs(5),
            health_timeout: std::time::Duration::from_secs(1),
            outage_lease_grace_ms: 30_000,
        },
        hub,
    )
    .await
    .unwrap_or_else(|e| panic!("opening PostgreSQL at {url}: {e}"));
    (Arc::new(store), None)
}

pub async fn agent(store: &dyn Store, team_id: i64, team: &str, name: &str, role: Role) -> Caller {
    store
        .create_agent(team_id, name, role, &format!("hash-{team}-{name}"))
        .await
        .unwrap();
    Caller {
        team_id,
        team: team.into(),
        agent: name.into(),
        role,
    }
}

/// A team with a coordinator, a tester and an executor.
pub async fn team(store: &dyn Store, name: &str) -> (Caller, Caller, Caller) {
    store.create_team(name).await.unwrap();
    let id = store.team_id(name).await.unwrap();
    (
        agent(store, id, name, "coordinator", Role::Coordinator).await,
        agent(store, id, name, "tester", Role::Tester).await,
        agent(store, id, name, "executor", Role::Executor).await,
    )
}

pub fn task(id: &str, blocked_by: &[&str]) -> NewTask {
    NewTask {
        id: Some(id.into()),
        subject: format!("do {id}"),
        blocked_by: blocked_by.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

pub fn prefixes(p: &str) -> Vec<String> {
    vec![p.to_string()]
}

/// The ids of the team's ready tasks (pending, every blocker completed), in id order.
pub async fn ready_ids(store: &dyn Store, team_id: i64) -> Vec<String> {
    let filter = huddle_daemon::store::TaskFilter {
        ready: true,
        limit: 100,
        ..Default::default()
    };
    let page = store.list_tasks(team_id, filter).await.unwrap();
    page.items.into_iter().map(|t| t.id).collect()
}
