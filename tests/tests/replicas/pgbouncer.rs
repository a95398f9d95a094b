//! Replicas through pgbouncer with its default settings (no `ignore_startup_parameters`): in
//! session mode they start (no `extra_float_digits` startup parameter), migrate, LISTEN, and a
//! stream on one sees the other's posts; in transaction mode, with a direct URL for LISTEN and
//! migrations, claims, completions, streams and wake-ups work while every client shares two
//! server connections, and restarts migrate without leaving a lock behind.

use huddle_tests::pgbouncer::PgBouncer;
use huddle_tests::process::HuddledProcess;
use huddle_tests::sse::SseReader;
use huddle_tests::Api;
use serde_json::json;
use std::collections::BTreeSet;
use std::time::Duration;

const ADMIN: &str = "pgbouncer-admin-token-0123456789abcdef";

#[tokio::test]
async fn replicas_work_through_pgbouncer_in_session_mode_with_its_default_settings() {
    let direct = huddle_tests::pg::empty_database().await;
    let parsed = reqwest::Url::parse(&direct).unwrap();
    let database = parsed.path().trim_start_matches('/').to_string();
    let bouncer = PgBouncer::start(parsed.port().unwrap(), "session");
    let url = bouncer.url(&database);
    let mut nodes = Vec::new();
    let mut dirs = Vec::new();
    for _ in 0..2 {
        let dir = tempfile::tempdir().unwrap();
        let env = [
            ("HUDDLE_DATABASE_URL", url.as_str()),
            ("HUDDLE_ADMIN_TOKEN", ADMIN),
        ];
        let node = HuddledProcess::start(dir.path(), &env)
            .unwrap_or_else(|e| panic!("a replica did not start through pgbouncer: {e}"));
        nodes.push(node);
        dirs.push(dir);
    }
    let (a, b) = (&nodes[0].url, &nodes[1].url);
    let admin = Api::new(a, ADMIN);
    admin
        .post("/v1/teams", json!({"name": "qa"}))
        .await
        .expect_status(201);
    let mut tokens = Vec::new();
    for name in ["coordinator", "tester"] {
        let r = admin
            .post("/v1/teams/qa/agents", json!({"name": name, "role": name}))
            .await
            .expect_status(201);
        tokens.push(r.body["token"].as_str().unwrap().to_string());
    }
    let stream = format!("{b}/v1/teams/qa/messages/stream");
    let mut on_b = SseReader::open(&stream, &tokens[1], None).await;
    let coord = Api::new(a, &tokens[0]).in_team("qa");
    for n in 1..=3 {
        coord
            .post(
                &coord.t("/messages"),
                json!({"to": "*", "type": "impl_progress", "summary": format!("m{n}")}),
            )
            .await
            .expect_status(201);
    }
    let got = on_b.take(3).await;
    let summaries: Vec<_> = got.iter().map(|g| g.2["summary"].clone()).collect();
    assert_eq!(summaries, ["m1", "m2", "m3"]);
    coord
        .post(
            &coord.t("/tasks"),
            json!({"id": "TEST-001", "subject": "s"}),
        )
        .await
        .expect_status(201);
    let tester = Api::new(b, &tokens[1]).in_team("qa");
    let claimed = tester
        .claim(json!({"prefixes": ["TEST"], "leaseMs": 60000}))
        .await
        .expect("claimed through pgbouncer");
    assert_eq!(claimed["id"], "TEST-001");
}

/// Two replicas through pgbouncer in transaction mode, every client of both sharing two
/// server connections: a statement prepared under a name would meet another client's (or be
/// missing), and a session lock taken through it would stay with whichever connection ran it.
#[tokio::test]
async fn replicas_work_through_pgbouncer_in_transaction_mode_with_a_direct_url() {
    let direct = huddle_tests::pg::empty_database().await;
    let parsed = reqwest::Url::parse(&direct).unwrap();
    let database = parsed.path().trim_start_matches('/').to_string();
    let bouncer = PgBouncer::start_sized(parsed.port().unwrap(), "transaction", 2);
    let pooled = bouncer.url(&database);
    let env = [
        ("HUDDLE_DATABASE_URL", pooled.as_str()),
        ("HUDDLE_STORAGE_DIRECT_DATABASE_URL", direct.as_str()),
        ("HUDDLE_ADMIN_TOKEN", ADMIN),
        ("HUDDLE_TASKS_LEASE_SWEEP_MS", "50"),
    ];
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    // Both start at once on an empty database: the migrations run once, under sqlx's lock.
    let starting: Vec<_> = dirs
        .iter()
        .map(|dir| {
            let path = dir.path().to_path_buf();
            let env = env.map(|(k, v)| (k.to_string(), v.to_string()));
            std::thread::spawn(move || {
                let env: Vec<(&str, &str)> =
                    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                HuddledProcess::start(&path, &env)
            })
        })
        .collect();
    let mut nodes: Vec<HuddledProcess> = starting
        .into_iter()
        .map(|t| {
            t.join()
                .unwrap()
                .unwrap_or_else(|e| panic!("a replica did not start: {e}"))
        })
        .collect();
    no_session_locks_left(&direct).await;

    let (a, b) = (nodes[0].url.clone(), nodes[1].url.clone());
    let admin = Api::new(&a, ADMIN);
    admin
        .post("/v1/teams", json!({"name": "qa"}))
        .await
        .expect_status(201);
    let mut tokens = Vec::new();
    for (name, role) in [
        ("coordinator", "coordinator"),
        ("t1", "tester"),
        ("t2", "tester"),
    ] {
        let r = admin
            .post("/v1/teams/qa/agents", json!({"name": name, "role": role}))
            .await
            .expect_status(201);
        tokens.push(r.body["token"].as_str().unwrap().to_string());
    }
    let coord = Api::new(&a, &tokens[0]).in_team("qa");

    // A wake-up: a claim parked on B is woken by a task created on A.
    let t1_b = Api::new(&b, &tokens[1]).in_team("qa");
    let parked = {
        let t1_b = t1_b.clone();
        tokio::spawn(async move {
            t1_b.post(
                &t1_b.t("/tasks/claim"),
                json!({"prefixes": ["WAKE"], "leaseMs": 60000, "waitMs": 30000}),
            )
            .await
        })
    };
    huddle_tests::eventually(30, "t1's claim on B ran", || {
        let coord = coord.clone();
        async move {
            let agents = coord.get("/v1/teams/qa/agents").await.expect_status(200);
            agents.body["agents"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a["name"] == "t1" && !a["lastSeenAt"].is_null())
        }
    })
    .await;
    coord
        .post(
            &coord.t("/tasks"),
            json!({"id": "WAKE-001", "subject": "s"}),
        )
        .await
        .expect_status(201);
    let woken = tokio::time::timeout(Duration::from_secs(40), parked)
        .await
        .expect("the claim on B returned")
        .unwrap();
    assert_eq!(woken.status, 200, "{:?}", woken.body);
    assert_eq!(woken.body["id"], "WAKE-001");
    t1_b.post(&t1_b.t("/tasks/WAKE-001/complete"), json!({}))
        .await
        .expect_status(200);

    // A stream on B sees A's posts, in order.
    let stream = format!("{b}/v1/teams/qa/messages/stream");
    let mut on_b = SseReader::open(&stream, &tokens[2], None).await;
    for n in 1..=5 {
        coord
            .post(
                &coord.t("/messages"),
                json!({"to": "*", "type": "impl_progress", "summary": format!("m{n}")}),
            )
            .await
            .expect_status(201);
    }
    let summaries: Vec<_> = on_b
        .take(5)
        .await
        .iter()
        .map(|g| g.2["summary"].clone())
        .collect();
    assert_eq!(summaries, ["m1", "m2", "m3", "m4", "m5"]);

    // 60 tasks in chains of three, claimed and completed by a tester on each replica at once.
    let mut tasks = Vec::new();
    for n in 1..=60 {
        let mut task = json!({"id": format!("TEST-{n:03}"), "subject": "s"});
        if n % 3 != 1 {
            task["blockedBy"] = json!([format!("TEST-{:03}", n - 1)]);
        }
        tasks.push(task);
    }
    coord
        .post(&coord.t("/tasks"), json!(tasks))
        .await
        .expect_status(201);
    let workers = [(&a, &tokens[1]), (&b, &tokens[2])].map(|(url, token)| {
        let api = Api::new(url, token).in_team("qa");
        tokio::spawn(async move { drain(api).await })
    });
    let mut done = Vec::new();
    for w in workers {
        done.extend(w.await.unwrap());
    }
    let unique: BTreeSet<_> = done.iter().cloned().collect();
    assert_eq!(done.len(), 60, "each task completed exactly once");
    assert_eq!(unique.len(), 60);
    let completed = coord
        .get(&coord.t("/tasks?status=completed&limit=100"))
        .await
        .expect_status(200);
    // The 60 and WAKE-001.
    assert_eq!(completed.body["tasks"].as_array().unwrap().len(), 61);

    // A restart migrates (sqlx's session lock, on the direct URL) and leaves no lock behind.
    nodes[1].stop();
    let env: Vec<(&str, &str)> = env.to_vec();
    nodes[1] = HuddledProcess::start(dirs[1].path(), &env)
        .unwrap_or_else(|e| panic!("the replica did not restart: {e}"));
    no_session_locks_left(&direct).await;
    let t2_b = Api::new(&nodes[1].url, &tokens[2]).in_team("qa");
    let listed = t2_b
        .get(&t2_b.t("/tasks?limit=100"))
        .await
        .expect_status(200);
    assert_eq!(listed.body["tasks"].as_array().unwrap().len(), 61);
    for n in &mut nodes {
        n.kill9();
    }
}

/// Claims up to five at a time and completes them in one batch until nothing is left;
/// returns the ids it completed.
async fn drain(api: Api) -> Vec<String> {
    let mut done = Vec::new();
    loop {
        let reply = api
            .post(
                &api.t("/tasks/claim"),
                json!({"prefixes": ["TEST"], "max": 5, "leaseMs": 60000, "waitMs": 2000}),
            )
            .await;
        if reply.status == 204 {
            let left = api.get(&api.t("/tasks?status=pending&limit=1")).await;
            let running = api.get(&api.t("/tasks?status=in_progress&limit=1")).await;
            let empty =
                |r: &huddle_tests::http::Reply| r.body["tasks"].as_array().unwrap().is_empty();
            if empty(&left) && empty(&running) {
                return done;
            }
            continue;
        }
        assert_eq!(reply.status, 200, "{:?}", reply.body);
        let ids: Vec<String> = reply.body["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_string())
            .collect();
        let body: Vec<_> = ids.iter().map(|id| json!({"id": id})).collect();
        api.post(&api.t("/tasks/complete"), json!({"tasks": body}))
            .await
            .expect_status(200);
        done.extend(ids);
    }
}

/// No advisory lock is held on the database: sqlx releases its migration lock on the session
/// that took it, which only a direct connection guarantees.
async fn no_session_locks_left(direct: &str) {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(direct).await.unwrap();
    let held: i64 = sqlx::query_scalar(
        "select count(*) from pg_locks
         where locktype = 'advisory'
           and database = (select oid from pg_database where datname = current_database())",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert_eq!(held, 0, "an advisory lock outlived the migration");
    let applied: i64 = sqlx::query_scalar("select count(*) from _sqlx_migrations where success")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    let files = std::fs::read_dir(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../migrations/postgres"
    ))
    .unwrap()
    .count() as i64;
    assert_eq!(applied, files, "every migration applied");
    let _ = conn.close().await;
}
