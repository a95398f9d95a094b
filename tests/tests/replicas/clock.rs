//! One clock: a replica whose own clock is 60 s ahead (libfaketime) does not shorten leases
//! taken on another, and timestamps and FIFO order follow the database's clock whichever
//! replica wrote.

use huddle_tests::process::HuddledProcess;
use huddle_tests::Api;
use serde_json::json;
use std::time::Duration;

const ADMIN: &str = "clock-admin-token-0123456789abcdef";

/// libfaketime's preload library, from Debian's package (scripts/install-test-deps).
fn libfaketime() -> String {
    let found = std::fs::read_dir("/usr/lib")
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("faketime/libfaketime.so.1"))
        .find(|p| p.exists());
    found
        .expect("libfaketime is not installed: apt-get install libfaketime (scripts/install-test-deps does)")
        .display()
        .to_string()
}

fn millis(rfc3339: &serde_json::Value) -> i64 {
    chrono::DateTime::parse_from_rfc3339(rfc3339.as_str().unwrap())
        .unwrap()
        .timestamp_millis()
}

/// The time in a response's `Date` header (the replica's own clock), in seconds.
async fn clock_of(url: &str) -> i64 {
    let reply = reqwest::get(format!("{url}/healthz")).await.unwrap();
    let date = reply.headers()["date"].to_str().unwrap().to_string();
    chrono::DateTime::parse_from_rfc2822(&date.replace("GMT", "+0000"))
        .unwrap()
        .timestamp()
}

#[tokio::test]
async fn a_replica_60_s_ahead_keeps_every_lease_its_full_length_and_timestamps_in_order() {
    let url = huddle_tests::pg::fresh_database().await;
    let preload = libfaketime();
    let common = [
        ("HUDDLE_DATABASE_URL", url.as_str()),
        ("HUDDLE_ADMIN_TOKEN", ADMIN),
        ("HUDDLE_TASKS_MIN_LEASE_MS", "50"),
    ];
    // A never sweeps after its first tick; B, 60 s ahead, sweeps every 50 ms.
    let dir_a = tempfile::tempdir().unwrap();
    let mut env_a = common.to_vec();
    env_a.push(("HUDDLE_TASKS_LEASE_SWEEP_MS", "3600000"));
    let a = HuddledProcess::start(dir_a.path(), &env_a).unwrap();
    let dir_b = tempfile::tempdir().unwrap();
    let mut env_b = common.to_vec();
    env_b.extend([
        ("HUDDLE_TASKS_LEASE_SWEEP_MS", "50"),
        ("LD_PRELOAD", preload.as_str()),
        ("FAKETIME", "+60s"),
        // Timers stay true: only the wall clock is ahead.
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
    ]);
    let b = HuddledProcess::start(dir_b.path(), &env_b).unwrap();
    let skew = clock_of(&b.url).await - clock_of(&a.url).await;
    assert!(
        skew >= 50,
        "B's clock is not ahead ({skew} s): libfaketime did not apply"
    );

    let admin = Api::new(&a.url, ADMIN);
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
    let on = |url: &str, i: usize| Api::new(url, &tokens[i]).in_team("qa");
    let (coord_a, coord_b, tester_a) = (on(&a.url, 0), on(&b.url, 0), on(&a.url, 1));

    // Tasks and messages written alternately on A and B: createdAt follows the order.
    for n in 1..=8 {
        let coord = if n % 2 == 0 { &coord_b } else { &coord_a };
        coord
            .post(
                &coord.t("/tasks"),
                json!({"id": format!("TEST-{n:03}"), "subject": "s"}),
            )
            .await
            .expect_status(201);
        coord
            .post(
                &coord.t("/messages"),
                json!({"to": "*", "type": "impl_progress", "summary": format!("{n}")}),
            )
            .await
            .expect_status(201);
    }
    let messages = coord_a.get(&coord_a.t("/messages?limit=100")).await;
    let messages = messages.body["messages"].as_array().unwrap().clone();
    assert_eq!(messages.len(), 8);
    let times: Vec<i64> = messages.iter().map(|m| millis(&m["createdAt"])).collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "message createdAt went backwards: {times:?}"
    );
    let tasks = coord_a.get(&coord_a.t("/tasks?limit=100")).await;
    let created: Vec<i64> = tasks.body["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| millis(&t["createdAt"]))
        .collect();
    assert!(
        created.windows(2).all(|w| w[0] <= w[1]),
        "task createdAt went backwards: {created:?}"
    );

    // Claimed on A in creation order (FIFO), whichever replica created them.
    let lease = tester_a
        .claim(json!({"prefixes": ["TEST"], "leaseMs": 5000}))
        .await
        .expect("TEST-001 is claimed");
    assert_eq!(lease["id"], "TEST-001");
    assert_eq!(
        millis(&lease["leaseExpiresAt"]) - millis(&lease["updatedAt"]),
        5000
    );
    let second = tester_a
        .claim(json!({"prefixes": ["TEST"], "leaseMs": 60000}))
        .await
        .expect("TEST-002 is claimed");
    assert_eq!(second["id"], "TEST-002", "FIFO across replicas");

    // A canary with the shortest lease: once it is back in the queue, B has swept (A does not).
    let canary = tester_a
        .claim(json!({"prefixes": ["TEST"], "leaseMs": 50}))
        .await
        .expect("TEST-003 is claimed");
    assert_eq!(canary["id"], "TEST-003");
    huddle_tests::eventually(60, "B expired the canary's 50 ms lease", || {
        let coord = coord_a.clone();
        async move {
            let t = coord.get(&coord.t("/tasks/TEST-003")).await;
            t.body["status"] == "pending"
        }
    })
    .await;
    // B has swept, with its clock a minute ahead: the 5 s lease is still the tester's...
    let held = coord_a.get(&coord_a.t("/tasks/TEST-001")).await;
    assert_eq!(held.body["status"], "in_progress", "{}", held.body);
    assert_eq!(held.body["claimedBy"], "tester");
    // ...and returns to the queue only once its full length has passed (the test's clock and
    // the database's are this machine's, which libfaketime leaves alone outside B).
    let expires_at = millis(&lease["leaseExpiresAt"]);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let t = coord_a.get(&coord_a.t("/tasks/TEST-001")).await;
        if t.body["status"] == "pending" {
            let now = chrono::Utc::now().timestamp_millis();
            assert!(
                now >= expires_at,
                "the lease was expired {} ms early",
                expires_at - now
            );
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the lease never expired"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
