//! The dashboard in a real browser: Debian's Chromium, driven by playwright-core from
//! `tests/dashboard-e2e/dashboard.mjs`, against a real daemon on port 0. This side seeds the team
//! over HTTP and makes every later change when the script asks for it (`STEP <name>` on its
//! stdout, `DONE <name> [text]` on its stdin); the script waits on conditions in the page, never
//! on time. Screenshots of every view land in `target/dashboard-screenshots/`.

use huddle_tests::{Api, TestDaemon};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

const TEAM: &str = "qa";
const STEPS: [&str; 5] = [
    "post-message",
    "patch-memory",
    "complete-task",
    "restart-daemon",
    "revoke-token",
];

/// The e2e package (its `node_modules` installed by `scripts/install-test-deps`).
pub(super) fn package_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("dashboard-e2e")
}

pub(super) fn chromium() -> PathBuf {
    std::env::var_os("HUDDLE_CHROMIUM").map_or_else(|| "/usr/bin/chromium".into(), PathBuf::from)
}

/// Node, Chromium and playwright-core, or a loud failure: this test is never skipped.
pub(super) fn require_browser() {
    let ci = if std::env::var("CI").as_deref() == Ok("true") {
        " (CI must run it)"
    } else {
        ""
    };
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        node,
        "node is required by the dashboard test{ci}: run scripts/install-test-deps"
    );
    assert!(
        chromium().is_file(),
        "{} is required by the dashboard test{ci}: run scripts/install-test-deps (apt: chromium)",
        chromium().display()
    );
    assert!(
        package_dir()
            .join("node_modules/playwright-core/package.json")
            .is_file(),
        "playwright-core is not installed in tests/dashboard-e2e{ci}: run scripts/install-test-deps (npm ci)"
    );
}

/// `target/dashboard-screenshots`, next to the test binaries (`target/<profile>/deps/…`).
pub(super) fn screenshot_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let target = exe
        .ancestors()
        .nth(3)
        .expect("the binary lives in target/<profile>/deps");
    target.join("dashboard-screenshots")
}

/// Posts a message as `api`; every message this test posts goes through here so it can count.
pub(super) async fn post(api: &Api, count: &mut usize, kind: &str, summary: &str, data: Value) {
    let to = if kind == "note" { "*" } else { "coordinator" };
    api.post(
        &api.t("/messages"),
        json!({"to": to, "type": kind, "summary": summary, "data": data}),
    )
    .await
    .expect_status(201);
    *count += 1;
}

/// The team the script expects: tasks in every status, a failed blocker with two tasks that can
/// never be ready behind it, fix-cycle progress for three tasks, a hostile summary, two memory
/// changes. Returns the number of messages posted.
pub(super) async fn seed(coord: &Api, tester: &Api) -> usize {
    let create = |body: Value| async move {
        coord
            .post(&coord.t("/tasks"), body)
            .await
            .expect_status(201);
    };
    let claim = || async {
        tester
            .claim(json!({"leaseMs": 600_000}))
            .await
            .expect("a ready task")
    };

    // Only one task is ready at each claim, so each claim takes the task meant for it.
    create(
        json!({"id": "TEST-003", "subject": "Payment provider sandbox suite", "maxAttempts": 3}),
    )
    .await;
    assert_eq!(claim().await["id"], "TEST-003");
    tester
        .post(
            &tester.t("/tasks/TEST-003/fail"),
            json!({"reason": "sandbox unreachable: connect ECONNREFUSED 10.0.0.7:443", "final": true}),
        )
        .await
        .expect_status(200);
    create(json!({"id": "TEST-008", "subject": "Static checks (clippy, eslint)"})).await;
    assert_eq!(claim().await["id"], "TEST-008");
    tester
        .post(
            &tester.t("/tasks/TEST-008/complete"),
            json!({"result": {"passRate": 100.0}}),
        )
        .await
        .expect_status(200);
    create(json!([
        {"id": "TEST-001", "subject": "Unit tests for auth", "activeForm": "Testing auth", "owner": "tester"},
        {"id": "TEST-002", "subject": "E2E login flow", "blockedBy": ["TEST-001"]},
        {"id": "TEST-004", "subject": "Checkout E2E against the payment sandbox", "blockedBy": ["TEST-003"]},
        {"id": "TEST-005", "subject": "Release smoke tests", "blockedBy": ["TEST-002", "TEST-004"]},
    ]))
    .await;
    assert_eq!(claim().await["id"], "TEST-001");
    // One model call in the spend ledger: the task page and the Agents view show its tokens.
    let call = tester
        .post(
            &tester.t("/spend/reserve"),
            json!({"model": "m1", "task": "TEST-001"}),
        )
        .await
        .expect_status(201);
    let id = call.body["id"].as_i64().expect("a reservation id");
    tester
        .post(
            &tester.t(&format!("/spend/{id}/settle")),
            json!({"promptTokens": 120, "completionTokens": 30}),
        )
        .await
        .expect_status(200);
    create(json!([
        {"id": "TEST-006", "subject": "Lint the fixtures", "owner": "tester"},
        {"id": "TEST-007", "subject": "Legacy IE11 suite"},
    ]))
    .await;
    // A huge subject: the card cuts it and offers the rest ("show more").
    let huge = format!(
        "Flaky checkout <b>suite</b> {} END-OF-SUBJECT",
        "retry ".repeat(70)
    );
    create(json!({"id": "TEST-009", "subject": huge})).await;
    coord
        .patch(&coord.t("/tasks/TEST-007"), json!({"status": "cancelled"}))
        .await
        .expect_status(200);

    // The test history: three full runs of `webapp`, the pass rate climbing.
    for (tree, failing) in [
        ("a1b2c3d4e5f6a7b8", 3),
        ("b2c3d4e5f6a7b8c9", 1),
        ("c3d4e5f6a7b8c9d0", 0),
    ] {
        let outcomes: Vec<Value> = (0..4)
            .map(|i| json!({"nodeid": format!("tests/test_app.py::test_{i}"), "outcome": if i < failing { "failed" } else { "passed" }}))
            .collect();
        tester
            .post(
                &tester.t("/history/runs"),
                json!({"project": "webapp", "tree": tree, "outcomes": outcomes}),
            )
            .await
            .expect_status(201);
    }

    let mut n = 0;
    // The tester's workspace note for TEST-001: the Agents view shows its fix branch.
    post(
        tester,
        &mut n,
        "impl_progress",
        "TEST-001: working in a worktree (a fix goes to huddle/TEST-001)",
        json!({"taskId": "TEST-001", "phase": "workspace", "workspace": "/src/app/.git/huddle/worktrees/wt-1", "base": "c3d4e5f6a7b8c9d0", "branch": "huddle/TEST-001"}),
    )
    .await;
    let progress = |task: &str, iteration: u32, max: u32, rate: f64, strategy: &str| json!({"taskId": task, "iteration": iteration, "maxIterations": max, "passRate": rate, "strategy": strategy});
    let data = progress("TEST-008", 1, 3, 90.0, "conservative");
    post(
        tester,
        &mut n,
        "impl_progress",
        "TEST-008: iteration 1, 90 %",
        data,
    )
    .await;
    let result = json!({"taskId": "TEST-008", "passRate": 100.0, "iterations": 2, "total": 12, "passed": 12, "failed": 0, "qualityGatePassed": true});
    post(
        tester,
        &mut n,
        "test_result",
        "static checks: 12/12 passing",
        result,
    )
    .await;
    for (i, rate, strategy) in [(1, 40.0, "conservative"), (2, 35.0, "aggressive")] {
        let data = progress("TEST-003", i, 5, rate, strategy);
        post(
            tester,
            &mut n,
            "impl_progress",
            &format!("TEST-003: iteration {i}, {rate} %"),
            data,
        )
        .await;
    }
    let fix = json!({"taskId": "TEST-003", "reason": "the payment sandbox does not answer", "category": "environment", "tests": ["test_charge", "test_refund"]});
    post(
        tester,
        &mut n,
        "fix_required",
        "TEST-003 needs the sandbox back",
        fix,
    )
    .await;
    let err = json!({"taskId": "TEST-003", "code": "runner_crashed", "message": "pytest exited 2", "tool": "pytest"});
    post(tester, &mut n, "error", "pytest crashed on TEST-003", err).await;
    for (i, rate, strategy) in [
        (1, 62.0, "conservative"),
        (2, 74.0, "conservative"),
        (3, 88.0, "surgical"),
        (4, 96.0, "surgical"),
    ] {
        let data = progress("TEST-001", i, 5, rate, strategy);
        post(
            tester,
            &mut n,
            "impl_progress",
            &format!("TEST-001: iteration {i}, {rate} %"),
            data,
        )
        .await;
    }
    // A fix's files and diff: the detail row shows them; markup in a diff stays text.
    let diff = "--- a/tests/test_auth.py\n+++ b/tests/test_auth.py\n@@ -1 +1 @@\n-assert token_ttl() == 60\n+assert token_ttl() == 30 # <b>x</b>\n";
    let result = json!({"taskId": "TEST-001", "passRate": 96.0, "iterations": 4, "total": 50, "passed": 48, "failed": 2, "qualityGatePassed": true,
        "changedFiles": ["src/auth.py", "tests/test_auth.py"], "testFilesChanged": ["tests/test_auth.py"], "diff": diff});
    post(tester, &mut n, "test_result", "auth: 48/50 passing", result).await;
    // Untrusted text: markup in a summary must show as text and run nothing.
    let hostile = r#"<img src=x onerror="document.title='pwned'"><script>document.title='pwned'</script> is just text"#;
    post(coord, &mut n, "note", hostile, json!({})).await;

    coord
        .patch(
            &coord.t("/memory"),
            json!({"project": {"name": "shop", "frameworks": ["pytest", "jest"], "qualityGate": 95}}),
        )
        .await
        .expect_status(200);
    tester
        .patch(
            &tester.t("/memory"),
            json!({"execution_results": {"unit": {"passRate": 96.0, "total": 50, "failed": ["test_token_refresh", "test_lockout"]}}}),
        )
        .await
        .expect_status(200);
    n
}

#[tokio::test]
async fn the_dashboard_follows_the_team_live_in_a_real_browser() {
    require_browser();
    let mut d = TestDaemon::start().await;
    let coord = d.team(TEAM).await;
    let tester = d.agent(TEAM, "tester", "tester").await;
    let watcher = d.agent(TEAM, "watcher", "observer").await;
    let mut messages = seed(&coord, &tester).await;

    let shots = screenshot_dir();
    let mut node = Command::new("node")
        .arg("dashboard.mjs")
        .current_dir(package_dir())
        .env("HUDDLE_URL", &d.url)
        .env("HUDDLE_TEAM", TEAM)
        .env("HUDDLE_TOKEN", &watcher.token)
        .env("HUDDLE_SCREENSHOTS", &shots)
        .env("HUDDLE_CHROMIUM", chromium())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("start node");
    let mut stdin = node.stdin.take().expect("stdin");
    let mut lines = BufReader::new(node.stdout.take().expect("stdout")).lines();

    let mut done = Vec::new();
    let mut passed = false;
    let run = async {
        while let Some(line) = lines.next_line().await.expect("read the script's output") {
            println!("dashboard.mjs: {line}");
            if line == "PASS" {
                passed = true;
                continue;
            }
            let Some(step) = line.strip_prefix("STEP ") else {
                continue;
            };
            let reply = match step {
                "post-message" => {
                    let summary = format!("live-{}", uuid::Uuid::new_v4().simple());
                    post(
                        &tester,
                        &mut messages,
                        "impl_progress",
                        &summary,
                        json!({"taskId": "TEST-006", "iteration": 1, "passRate": 50.0}),
                    )
                    .await;
                    summary
                }
                "patch-memory" => {
                    coord
                        .patch(
                            &coord.t("/memory"),
                            json!({"release": {"candidate": "1.4.0", "waitingOn": ["TEST-003"]}}),
                        )
                        .await
                        .expect_status(200);
                    String::new()
                }
                "complete-task" => {
                    tester
                        .post(
                            &tester.t("/tasks/TEST-001/complete"),
                            json!({"result": {"passRate": 96.0}}),
                        )
                        .await
                        .expect_status(200);
                    String::new()
                }
                "restart-daemon" => {
                    // Both streams drop; the page must reconnect and resume after its last ids.
                    d = d.restart().await;
                    let summary = format!("resumed-{}", uuid::Uuid::new_v4().simple());
                    post(&coord, &mut messages, "note", &summary, json!({})).await;
                    format!("{messages} {summary}")
                }
                "revoke-token" => {
                    coord
                        .post(&coord.t("/agents/watcher/revoke"), json!({}))
                        .await
                        .expect_status(200);
                    String::new()
                }
                other => panic!("the script asked for an unknown step: {other}"),
            };
            done.push(step.to_string());
            stdin
                .write_all(format!("DONE {step} {reply}\n").as_bytes())
                .await
                .expect("answer the script");
            stdin.flush().await.expect("flush");
        }
    };
    tokio::time::timeout(Duration::from_secs(240), run)
        .await
        .expect("the browser script finished within 4 minutes");
    let status = node.wait().await.expect("node exit");
    assert!(
        status.success() && passed,
        "the browser script failed ({status}); see its output above and {}",
        shots.join("failure.png").display()
    );
    assert_eq!(done, STEPS, "every step ran, in order");
    for view in [
        "signin", "tasks", "messages", "progress", "agents", "memory",
    ] {
        let png = shots.join(format!("dashboard-{view}.png"));
        let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("{}: {e}", png.display()));
        assert!(bytes.starts_with(b"\x89PNG"), "{} is a PNG", png.display());
    }
}
