//! Several `huddled` replicas on one PostgreSQL database, as real processes: work created on
//! one is claimed on another, streams on one see every replica's posts in order, and a replica
//! killed with SIGKILL loses no acknowledged write while the others reclaim its leases.

mod clock;
mod commit_locks;
mod completion_recheck;
mod concurrency;
mod lease_pool;
mod lease_queue;
mod limits;
mod pgbouncer;
mod read_shares;
mod scope_claims;
mod team_batches;
mod team_delete;

use huddle_tests::process::HuddledProcess;
use huddle_tests::sse::SseReader;
use huddle_tests::Api;
use serde_json::json;
use std::time::Duration;

/// A configured admin token (at least 32 characters), the same on every replica.
const ADMIN: &str = "replicas-admin-token-0123456789abcdef";

struct Replicas {
    nodes: Vec<HuddledProcess>,
    _dirs: Vec<tempfile::TempDir>,
}

/// `n` replicas on one fresh database, each with its own data directory and port.
async fn replicas(n: usize) -> Replicas {
    let url = huddle_tests::pg::fresh_database().await;
    let mut nodes = Vec::new();
    let mut dirs = Vec::new();
    for _ in 0..n {
        let dir = tempfile::tempdir().unwrap();
        let node = HuddledProcess::start(
            dir.path(),
            &[
                ("HUDDLE_DATABASE_URL", url.as_str()),
                ("HUDDLE_ADMIN_TOKEN", ADMIN),
                ("HUDDLE_TASKS_LEASE_SWEEP_MS", "50"),
                ("HUDDLE_TASKS_MIN_LEASE_MS", "50"),
            ],
        )
        .unwrap_or_else(|e| panic!("replica did not start: {e}"));
        nodes.push(node);
        dirs.push(dir);
    }
    Replicas { nodes, _dirs: dirs }
}

impl Drop for Replicas {
    fn drop(&mut self) {
        for n in &mut self.nodes {
            n.kill9();
        }
    }
}

/// A replica on `url` whose database sessions are named `name` (`application_name`, so a test
/// can see them wait in `pg_stat_activity`), with `env` beside the database and admin token.
fn named_replica(
    url: &str,
    dir: &std::path::Path,
    name: &str,
    env: &[(&str, &str)],
) -> HuddledProcess {
    let join = if url.contains('?') { '&' } else { '?' };
    let db_url = format!("{url}{join}application_name={name}");
    let mut all = vec![
        ("HUDDLE_DATABASE_URL", db_url.as_str()),
        ("HUDDLE_ADMIN_TOKEN", ADMIN),
    ];
    all.extend_from_slice(env);
    HuddledProcess::start(dir, &all).unwrap_or_else(|e| panic!("replica {name} did not start: {e}"))
}

/// Creates the team on `url` and an agent per (name, role); returns their APIs on `url`.
async fn team(url: &str, agents: &[(&str, &str)]) -> Vec<Api> {
    let admin = Api::new(url, ADMIN);
    admin
        .post("/v1/teams", json!({"name": "qa"}))
        .await
        .expect_status(201);
    let mut apis = Vec::new();
    for (name, role) in agents {
        let r = admin
            .post("/v1/teams/qa/agents", json!({"name": name, "role": role}))
            .await
            .expect_status(201);
        apis.push(Api::new(url, r.body["token"].as_str().unwrap()).in_team("qa"));
    }
    apis
}

/// Whether a backend of a replica (its `application_name`) is waiting for a lock.
const WAITS_FOR_A_LOCK: &str = "select exists(select 1 from pg_stat_activity
     where datname = current_database() and application_name = $1 and wait_event_type = 'Lock')";

/// Polls the database until `sql` (one text parameter, `arg`) answers true.
async fn until(db: &mut sqlx::PgConnection, what: &str, sql: &str, arg: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let answer: bool = sqlx::query_scalar(sql)
            .bind(arg)
            .fetch_one(&mut *db)
            .await
            .unwrap();
        if answer {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Locks the rows of `ids` on a connection of its own, until it rolls back.
async fn lock_rows(url: &str, ids: &[&str]) -> sqlx::PgConnection {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    sqlx::query("begin").execute(&mut conn).await.unwrap();
    sqlx::query("select 1 from tasks where id = any($1) for update")
        .bind(ids)
        .execute(&mut conn)
        .await
        .unwrap();
    conn
}

/// Locks `task`'s row on a connection of its own and has `api` complete the task: the
/// completion, seen waiting for that row by the replica named `replica` (its
/// `application_name`), holds its batch until the returned connection rolls back.
async fn stuck_completion(
    url: &str,
    db: &mut sqlx::PgConnection,
    api: &Api,
    task: &str,
    replica: &str,
) -> (
    sqlx::PgConnection,
    tokio::task::JoinHandle<huddle_tests::Reply>,
) {
    let row_lock = lock_rows(url, &[task]).await;
    let completion = {
        let api = api.clone();
        let path = api.t(&format!("/tasks/{task}/complete"));
        tokio::spawn(async move { api.post(&path, json!({})).await })
    };
    until(
        db,
        &format!("the completion of {task} waits for its row"),
        WAITS_FOR_A_LOCK,
        replica,
    )
    .await;
    (row_lock, completion)
}

/// The same agent's API on another replica.
fn on(api: &Api, url: &str) -> Api {
    Api::new(url, &api.token).in_team("qa")
}

#[tokio::test]
async fn a_claim_waiting_on_one_replica_wakes_for_a_task_created_on_another() {
    let r = replicas(2).await;
    let (a, b) = (&r.nodes[0].url, &r.nodes[1].url);
    let apis = team(a, &[("coordinator", "coordinator"), ("tester", "tester")]).await;
    let (coord_a, tester_b) = (apis[0].clone(), on(&apis[1], b));
    let waiting = tokio::spawn(async move {
        tester_b
            .post(
                &tester_b.t("/tasks/claim"),
                json!({"prefixes": ["TEST"], "leaseMs": 60000, "waitMs": 30000}),
            )
            .await
    });
    // The claim is parked on B before the task exists: its first attempt marks the tester as
    // seen (visible from A), then it waits, and must be woken by A's write.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let agents = coord_a.get("/v1/teams/qa/agents").await.expect_status(200);
        let seen = agents.body["agents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["name"] == "tester" && !a["lastSeenAt"].is_null());
        if seen {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "B's claim never ran"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pending = coord_a.get(&coord_a.t("/tasks?status=pending")).await;
    assert_eq!(pending.body["tasks"].as_array().unwrap().len(), 0);
    coord_a
        .post(
            &coord_a.t("/tasks"),
            json!({"id": "TEST-001", "subject": "s"}),
        )
        .await
        .expect_status(201);
    let claimed = tokio::time::timeout(Duration::from_secs(40), waiting)
        .await
        .expect("the claim on B returned")
        .unwrap();
    assert_eq!(claimed.status, 200, "{:?}", claimed.body);
    assert_eq!(claimed.body["id"], "TEST-001");
    assert_eq!(claimed.body["claimedBy"], "tester");
}

#[tokio::test]
async fn a_stream_on_one_replica_sees_every_replicas_posts_in_order() {
    let r = replicas(2).await;
    let (a, b) = (&r.nodes[0].url, &r.nodes[1].url);
    let apis = team(a, &[("coordinator", "coordinator"), ("tester", "tester")]).await;
    let (coord, tester_b) = (apis[0].clone(), on(&apis[1], b));
    let stream_url = format!("{b}{}", tester_b.t("/messages/stream"));
    let mut on_b = SseReader::open(&stream_url, &tester_b.token, None).await;
    let post = |api: Api, n: usize| async move {
        api.post(
            &api.t("/messages"),
            json!({"to": "*", "type": "impl_progress", "summary": format!("step {n}")}),
        )
        .await
        .expect_status(201);
    };
    // Posts alternate between the replicas; B's stream must see them all, in seq order.
    for n in 0..30 {
        if n % 2 == 0 {
            post(coord.clone(), n).await;
        } else {
            post(tester_b.clone(), n).await;
        }
    }
    let got = on_b.take(30).await;
    assert_eq!(
        got.iter().map(|g| g.0).collect::<Vec<_>>(),
        (1..=30).collect::<Vec<_>>()
    );
    let summaries: Vec<_> = got.iter().map(|g| g.2["summary"].clone()).collect();
    assert_eq!(summaries[0], "step 0");
    assert_eq!(summaries[29], "step 29");
}

#[tokio::test]
async fn a_replica_killed_mid_work_loses_no_acknowledged_write_and_its_leases_return() {
    let mut r = replicas(2).await;
    let (a, b) = (r.nodes[0].url.clone(), r.nodes[1].url.clone());
    let apis = team(
        &a,
        &[
            ("coordinator", "coordinator"),
            ("tester", "tester"),
            ("executor", "executor"),
        ],
    )
    .await;
    let (coord, tester_a) = (apis[0].clone(), apis[1].clone());
    let tasks: Vec<_> = (1..=20)
        .map(|n| json!({"id": format!("TEST-{n:03}"), "subject": "s"}))
        .collect();
    coord
        .post(&coord.t("/tasks"), json!(tasks))
        .await
        .expect_status(201);
    // On A: claim five with a short lease, post acknowledged messages, patch memory.
    let claimed = tester_a
        .post(
            &tester_a.t("/tasks/claim"),
            json!({"prefixes": ["TEST"], "leaseMs": 1000, "max": 5}),
        )
        .await
        .expect_status(200);
    let held: Vec<String> = claimed.body["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(held.len(), 5);
    let mut acknowledged = Vec::new();
    for n in 0..20 {
        let reply = tester_a
            .post(
                &tester_a.t("/messages"),
                json!({"to": "coordinator", "type": "test_result", "summary": format!("run {n}")}),
            )
            .await
            .expect_status(201);
        acknowledged.push(reply.body["seq"].as_i64().unwrap());
    }
    tester_a
        .patch(&tester_a.t("/memory"), json!({"strategy": "kill"}))
        .await
        .expect_status(200);
    r.nodes[0].kill9();

    // Everything A acknowledged is on B.
    let coord_b = on(&coord, &b);
    let listed = coord_b
        .get(&coord_b.t("/messages?limit=100"))
        .await
        .expect_status(200);
    let seqs: Vec<i64> = listed.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["seq"].as_i64().unwrap())
        .collect();
    assert_eq!(seqs, acknowledged);
    let memory = coord_b.get(&coord_b.t("/memory")).await.expect_status(200);
    assert_eq!(memory.body["doc"]["strategy"], "kill");

    // B's sweeper returns A's expired leases; another worker claims them on B.
    let executor_b = on(&apis[2], &b);
    let mut reclaimed = std::collections::BTreeSet::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while reclaimed.len() < 20 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "only {} of 20 tasks claimable on B",
            reclaimed.len()
        );
        let reply = executor_b
            .post(
                &executor_b.t("/tasks/claim"),
                json!({"prefixes": ["TEST"], "leaseMs": 60000, "max": 20, "waitMs": 2000}),
            )
            .await;
        if reply.status == 200 {
            for t in reply.body["tasks"].as_array().unwrap() {
                reclaimed.insert(t["id"].as_str().unwrap().to_string());
                if held.contains(&t["id"].as_str().unwrap().to_string()) {
                    assert_eq!(t["attempts"], 1, "an expired lease counts an attempt");
                }
            }
        }
    }
    for id in &held {
        assert!(reclaimed.contains(id), "{id} was not reclaimed");
    }
}

#[tokio::test]
async fn a_token_revoked_on_one_replica_stops_working_on_the_others() {
    let r = replicas(2).await;
    let (a, b) = (&r.nodes[0].url, &r.nodes[1].url);
    let apis = team(a, &[("coordinator", "coordinator"), ("tester", "tester")]).await;
    let tester_b = on(&apis[1], b);
    // B has resolved (and cached) the tester's token.
    tester_b.get(&tester_b.t("/tasks")).await.expect_status(200);
    let stream_url = format!("{b}{}", tester_b.t("/messages/stream"));
    let mut stream = SseReader::open(&stream_url, &tester_b.token, None).await;
    Api::new(a, ADMIN)
        .post("/v1/teams/qa/agents/tester/revoke", json!({}))
        .await
        .expect_status(200);
    // B learns of it through the database: the token is refused and its stream ends.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let status = tester_b.get(&tester_b.t("/tasks")).await.status;
        if status == 401 {
            break;
        }
        assert_eq!(status, 200);
        assert!(
            tokio::time::Instant::now() < deadline,
            "B still accepts the revoked token"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(stream.next().await.is_none(), "the stream on B ended");
}

/// Parks a long-polling claim with `body` on `api`'s replica; returns once its first look ran
/// (the agent is seen, also from `coord`).
async fn park_claim(
    coord: &Api,
    api: Api,
    name: &str,
    body: serde_json::Value,
) -> tokio::task::JoinHandle<huddle_tests::Reply> {
    let waiting = tokio::spawn(async move { api.post(&api.t("/tasks/claim"), body).await });
    huddle_tests::eventually(30, &format!("{name}'s claim ran"), || {
        let coord = coord.clone();
        async move {
            let agents = coord.get("/v1/teams/qa/agents").await.expect_status(200);
            agents.body["agents"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a["name"] == name && !a["lastSeenAt"].is_null())
        }
    })
    .await;
    waiting
}

#[tokio::test]
async fn a_task_made_ready_on_one_replica_wakes_a_claimer_of_its_project_on_another() {
    let r = replicas(2).await;
    let (a, b) = (&r.nodes[0].url, &r.nodes[1].url);
    let agents = [
        ("coordinator", "coordinator"),
        ("calc", "tester"),
        ("shop", "tester"),
    ];
    let apis = team(a, &agents).await;
    let coord_a = apis[0].clone();
    let wait = |project: &str| json!({"prefixes": ["TEST"], "waitMs": 30000, "project": project, "strictProject": true});
    // calc waits longest: a wake-up that lost the project on its way would go to it.
    let calc = park_claim(
        &coord_a,
        on(&apis[1], b),
        "calc",
        wait("github.com/org/calc"),
    )
    .await;
    let shop = park_claim(&coord_a, on(&apis[2], b), "shop", wait("my shop")).await;
    for (id, project) in [("TEST-001", "my shop"), ("TEST-002", "github.com/org/calc")] {
        coord_a
            .post(
                &coord_a.t("/tasks"),
                json!({"id": id, "subject": "s", "metadata": {"project": project}}),
            )
            .await
            .expect_status(201);
    }
    for (waiting, id) in [(shop, "TEST-001"), (calc, "TEST-002")] {
        let claimed = tokio::time::timeout(Duration::from_secs(40), waiting)
            .await
            .expect("the claim on B returned")
            .unwrap();
        assert_eq!(claimed.status, 200, "{:?}", claimed.body);
        assert_eq!(claimed.body["id"], id);
    }
}
