//! A team's reads hold at most `[limits] max_reads_per_team` of a PostgreSQL replica's pool:
//! an observer looping on heavy reads queues behind its own team's share, and another team's
//! read still reaches the database.
//!
//! The test locks the `tasks` table (`access exclusive`), so every list of tasks waits in
//! PostgreSQL for the lock, holding its pooled connection. With a share of one, team A's
//! second list waits in the replica for A's share (`huddle_reads_waiting_for_share`), while
//! team B's list goes on to the database.

use super::{named_replica, team, until, ADMIN};
use huddle_tests::process::HuddledProcess;
use huddle_tests::Api;
use serde_json::json;
use sqlx::{Connection, PgConnection};
use std::time::Duration;

/// Lists waiting for the table lock, sent by the replica named `$1`.
const LIST_WAITERS: &str = "select count(*) from pg_stat_activity
     where datname = current_database() and application_name = $1
       and wait_event_type = 'Lock' and query like '%from tasks%'";

/// A replica named `shares` with a read share of one and the given acquire timeout, and an
/// observer of each of two teams, each of whom has listed once (its token is then cached).
async fn setup(acquire_timeout_ms: &str) -> (String, tempfile::TempDir, HuddledProcess, Api, Api) {
    let url = huddle_tests::pg::fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let node = named_replica(
        &url,
        dir.path(),
        "shares",
        &[
            ("HUDDLE_LIMITS_MAX_READS_PER_TEAM", "1"),
            ("HUDDLE_STORAGE_POOL_SIZE", "8"),
            ("HUDDLE_STORAGE_ACQUIRE_TIMEOUT_MS", acquire_timeout_ms),
            // No sweep reading `tasks` while the table is locked.
            ("HUDDLE_TASKS_LEASE_SWEEP_MS", "3600000"),
        ],
    );
    let a = team(&node.url, &[("watcher", "observer")]).await.remove(0);
    let admin = Api::new(&node.url, ADMIN);
    admin
        .post("/v1/teams", json!({"name": "other"}))
        .await
        .expect_status(201);
    let token = admin
        .post(
            "/v1/teams/other/agents",
            json!({"name": "watcher", "role": "observer"}),
        )
        .await
        .expect_status(201)
        .body["token"]
        .as_str()
        .unwrap()
        .to_string();
    let b = Api::new(&node.url, &token).in_team("other");
    a.get(&a.t("/tasks")).await.expect_status(200);
    b.get(&b.t("/tasks")).await.expect_status(200);
    (url, dir, node, a, b)
}

/// Locks the `tasks` table on a connection of its own, until it rolls back.
async fn lock_tasks(url: &str) -> PgConnection {
    let mut lock = PgConnection::connect(url).await.unwrap();
    sqlx::query("begin").execute(&mut lock).await.unwrap();
    sqlx::query("lock table tasks in access exclusive mode")
        .execute(&mut lock)
        .await
        .unwrap();
    lock
}

/// The `tasks` table locked, `api`'s first list waiting for the lock in the database (holding
/// its team's one share), and its second waiting in the replica for that share.
struct Held {
    lock: PgConnection,
    db: PgConnection,
    first: tokio::task::JoinHandle<huddle_tests::Reply>,
    second: tokio::task::JoinHandle<huddle_tests::Reply>,
}

async fn hold_the_share(url: &str, node: &HuddledProcess, api: &Api) -> Held {
    let lock = lock_tasks(url).await;
    let mut db = PgConnection::connect(url).await.unwrap();
    let first = list(api);
    until(
        &mut db,
        "the first list waits for the lock",
        &format!("select ({LIST_WAITERS}) >= 1"),
        "shares",
    )
    .await;
    let second = list(api);
    until_waiting_for_share(&node.url, 1).await;
    Held {
        lock,
        db,
        first,
        second,
    }
}

fn list(api: &Api) -> tokio::task::JoinHandle<huddle_tests::Reply> {
    let api = api.clone();
    tokio::spawn(async move { api.get(&api.t("/tasks")).await })
}

#[tokio::test]
async fn a_team_past_its_read_share_waits_while_another_team_reads() {
    let (url, _dir, node, a, b) = setup("120000").await;
    let Held {
        mut lock,
        mut db,
        first,
        second,
    } = hold_the_share(&url, &node, &a).await;
    let other = list(&b);
    until(
        &mut db,
        "B's list reaches the database while A's second waits for A's share",
        &format!("select ({LIST_WAITERS}) >= 2"),
        "shares",
    )
    .await;
    let at_database: i64 = sqlx::query_scalar(LIST_WAITERS)
        .bind("shares")
        .fetch_one(&mut db)
        .await
        .unwrap();
    assert_eq!(
        at_database, 2,
        "A's first list and B's wait in the database; A's second is held in the replica"
    );
    assert_eq!(waiting_for_share(&node.url).await, 1.0);

    sqlx::query("rollback").execute(&mut lock).await.unwrap();
    for reply in [first, second, other] {
        reply.await.unwrap().expect_status(200);
    }
    until_waiting_for_share(&node.url, 0).await;
}

/// Past `acquire_timeout_ms` a read still waiting for its team's share is answered 503
/// `team_reads_busy` with `Retry-After`, while the read holding the share goes on; while it
/// waits it is counted in the gauge.
#[tokio::test]
async fn a_read_waiting_past_the_acquire_timeout_is_answered_busy() {
    // Short, but not so short that opening a pooled connection on a loaded machine runs
    // past it during the setup.
    let (url, _dir, node, a, _b) = setup("3000").await;
    let Held {
        mut lock,
        first,
        second,
        ..
    } = hold_the_share(&url, &node, &a).await;
    let second = second.await.unwrap().expect_error(503, "team_reads_busy");
    assert_eq!(
        second
            .headers
            .get("retry-after")
            .map(|v| v.to_str().unwrap()),
        Some("1")
    );
    sqlx::query("rollback").execute(&mut lock).await.unwrap();
    first.await.unwrap().expect_status(200);
    a.get(&a.t("/tasks")).await.expect_status(200);
    until_waiting_for_share(&node.url, 0).await;
}

/// `huddle_reads_waiting_for_share` now.
async fn waiting_for_share(url: &str) -> f64 {
    let text = reqwest::Client::new()
        .get(format!("{url}/metrics"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .expect("scrape")
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("huddle_reads_waiting_for_share "))
        .map_or(0.0, |v| v.trim().parse().unwrap())
}

async fn until_waiting_for_share(url: &str, n: u32) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while waiting_for_share(url).await != f64::from(n) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {n} read(s) waiting for their team's share"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
