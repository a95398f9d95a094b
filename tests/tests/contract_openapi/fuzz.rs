//! schemathesis (PyPI; `scripts/install-test-deps` installs it) against a real `huddled` child
//! process with a valid coordinator token: thousands of generated requests, none may answer 5xx
//! and every answer must match `/openapi.json` (status, content type, headers, body schema).
//!
//! Deterministic: a fixed seed, one worker, no example database carried between runs.

use huddle_tests::process::HuddledProcess;
use huddle_tests::Api;
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ADMIN: &str = "contract-admin-token-0123456789abcdef";

/// At least this many requests over both runs.
const MIN_REQUESTS: usize = 2_000;

/// A hard limit per schemathesis run (it takes well under a minute on an idle machine).
const RUN_LIMIT: Duration = Duration::from_secs(15 * 60);

/// schemathesis.toml. `{team}` is always the seeded team so requests reach the handlers instead
/// of all answering 404. A refused stale `If-Match` (412) or oversized body (413) counts as
/// rejecting invalid data. SSE streams never end: read the first event, or give up on a silent
/// stream after two seconds (keep-alives come every second).
const CONFIG: &str = r#"
[parameters]
"path.team" = "qa"

[generation]
max-examples = 35

[checks.negative_data_rejection]
expected-statuses = [400, 401, 403, 404, 409, 412, 413, 429]

[checks.positive_data_acceptance]
expected-statuses = [200, 201, 202, 204, 401, 403, 404, 409, 412, 429]

# A valid request may depend on what the schema cannot know: an unknown blocker or recipient,
# an inbox position past the last message, a JSON Patch path that does not exist or a `test`
# that fails, a node id twice in one run, more than 16 search words, a webhook URL whose host
# does not resolve or is not public, the agent name `human` (questions for a person own it); a
# coordinator claims only the prefixes it names; an approval gate needs a `decision` (and an
# answer needs words or a decision: the document's `anyOf` says so, yet schemathesis still
# sends `{}` as valid); a gate's deadline must be ahead and within a year, `onDeadline` goes
# with a deadline, and a person-only gate is never approved by its deadline; a holder's
# question and its long poll take the daemon's lease and wait bounds and the team's wait.
# Those operations may answer 400 to schema-valid data; every other one may not.
[[operations]]
include-operation-id = ["answerQuestion", "gateTask", "askQuestion", "questionDecision", "createTasks", "updateTask", "postMessage", "postMessages", "ackInbox", "claimTasks", "streamMessages", "patchMemory", "postTestRun", "searchMessages", "createWebhook", "createAgent"]
checks.positive_data_acceptance.expected-statuses = [200, 201, 202, 204, 400, 401, 403, 404, 409, 412, 429]

# schemathesis cannot generate an `application/x-ndjson` body (a team export's lines); the
# import's bad files are tested in `tests/tests/api/team_admin.rs`.
[[operations]]
include-operation-id = ["importTeam"]
enabled = false

[[operations]]
include-operation-id-regex = "^stream"
max-stream-events = 1
request-timeout = 2.0
generation = { max-examples = 25 }
"#;

/// Settings that keep fuzzing fast and meaningful: short long-polls, no rate limit in the way,
/// stream slots freed within a second of a client leaving.
const ENV: &[(&str, &str)] = &[
    ("HUDDLE_ADMIN_TOKEN", ADMIN),
    ("HUDDLE_TASKS_MAX_WAIT_MS", "50"),
    ("HUDDLE_LIMITS_REQUESTS_PER_MINUTE", "10000000"),
    ("HUDDLE_LIMITS_BURST", "1000000"),
    ("HUDDLE_LIMITS_FAILED_AUTH_BURST", "1000000"),
    ("HUDDLE_LIMITS_MAX_STREAMS_PER_TOKEN", "10000"),
    ("HUDDLE_STREAMS_KEEPALIVE_SECS", "1"),
];

/// The schemathesis command, from the virtualenv `scripts/install-test-deps` puts it in
/// (`tests/.venvs/schemathesis`), or `None` outside CI when it is not installed.
fn schemathesis() -> Option<std::path::PathBuf> {
    let command =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(".venvs/schemathesis/bin/schemathesis");
    let works = Command::new(&command)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if works {
        return Some(command);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "{} is missing; scripts/install-test-deps installs it",
            command.display()
        );
    }
    eprintln!("SKIPPED: schemathesis is not installed (run scripts/install-test-deps)");
    None
}

/// A team `qa` with a coordinator (whose token schemathesis uses), a tester for the agent
/// routes' examples, tasks for the task routes and claims, a message and a memory document.
async fn seed(url: &str) -> String {
    let admin = Api::new(url, ADMIN);
    admin
        .post("/v1/teams", json!({ "name": "qa" }))
        .await
        .expect_status(201);
    let lead = admin
        .post(
            "/v1/teams/qa/agents",
            json!({ "name": "qa-lead", "role": "coordinator" }),
        )
        .await
        .expect_status(201);
    admin
        .post(
            "/v1/teams/qa/agents",
            json!({ "name": "tester-1", "role": "tester" }),
        )
        .await
        .expect_status(201);
    let token = lead.body["token"].as_str().expect("token").to_string();
    let api = Api::new(url, &token).in_team("qa");
    let tasks: Vec<Value> = (1..=20)
        .map(|n| json!({ "id": format!("TEST-{n:03}"), "subject": format!("test {n}") }))
        .chain((1..=5).map(|n| json!({ "id": format!("QARUN-{n:03}"), "subject": "run" })))
        .collect();
    api.post(&api.t("/tasks"), Value::Array(tasks))
        .await
        .expect_status(201);
    api.post(
        &api.t("/messages"),
        json!({ "to": "*", "type": "test_result", "summary": "seeded" }),
    )
    .await
    .expect_status(201);
    api.put(
        &api.t("/memory"),
        json!({ "doc": { "test_strategy": { "test_framework": "pytest" } } }),
    )
    .await
    .expect_status(200);
    token
}

/// What one schemathesis run did.
struct Outcome {
    success: bool,
    output: String,
    /// "N generated" from schemathesis's summary.
    generated: usize,
    /// The HTTP status of every request it made (from its HAR report).
    statuses: Vec<u16>,
}

fn run(st: &Path, dir: &Path, url: &str, token: &str, name: &str, select: &[&str]) -> Outcome {
    let har = dir.join(format!("{name}.har"));
    let log = dir.join(format!("{name}.log"));
    let log_file = std::fs::File::create(&log).expect("log file");
    let mut child = Command::new(st)
        .arg("--config-file")
        .arg(dir.join("schemathesis.toml"))
        .arg("run")
        .arg(format!("{url}/openapi.json"))
        .args(["-H", &format!("Authorization: Bearer {token}")])
        // Every check. positive_data_acceptance allows the refusals state explains (a stale
        // If-Match, a duplicate id, a task someone else holds, an unknown name): a request the
        // document calls valid is never refused as malformed (400, 413, 422).
        .args(["--checks", "all"])
        .args(["--phases", "examples,coverage,fuzzing"])
        .args([
            "--seed",
            "42",
            "--workers",
            "1",
            "--generation-database",
            "none",
        ])
        .args(["--request-timeout", "30", "--no-color"])
        .args(["--report", "har", "--report-har-path"])
        .arg(&har)
        .args(select)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().expect("log file"))
        .stderr(log_file)
        .spawn()
        .expect("starting schemathesis");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for schemathesis") {
            break Some(status);
        }
        if started.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let output = std::fs::read_to_string(&log).unwrap_or_default();
    let Some(status) = status else {
        panic!("schemathesis ({name}) ran past {RUN_LIMIT:?}:\n{output}");
    };
    // The summary's "Test cases:" line: `2413 generated, 2413 passed, 38 skipped`.
    let generated = output
        .lines()
        .find_map(|l| l.trim().split_once(" generated, ")?.0.parse().ok())
        .unwrap_or(0);
    let statuses = std::fs::read(&har)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .and_then(|h| h["log"]["entries"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|e| e["response"]["status"].as_u64())
        .map(|s| s as u16)
        .collect();
    Outcome {
        success: status.success(),
        output,
        generated,
        statuses,
    }
}

#[tokio::test]
async fn schemathesis_finds_no_server_error_and_no_drift() {
    let Some(st) = schemathesis() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("data")).expect("data dir");
    std::fs::write(dir.path().join("schemathesis.toml"), CONFIG).expect("config");
    let daemon = HuddledProcess::start(&dir.path().join("data"), ENV).expect("huddled started");
    let token = seed(&daemon.url).await;

    // Revoking or rotating would sooner or later hit the coordinator (schemathesis reuses
    // names from earlier answers) and turn the rest of the run into 401s, so those two
    // operations run on their own, last.
    let runs: [(&str, &[&str]); 2] = [
        (
            "main",
            &[
                "--exclude-operation-id",
                "revokeAgent",
                "--exclude-operation-id",
                "rotateAgent",
            ],
        ),
        (
            "agent-tokens",
            &[
                "--include-operation-id",
                "revokeAgent",
                "--include-operation-id",
                "rotateAgent",
            ],
        ),
    ];
    let (mut generated, mut requests) = (0, 0);
    for (name, select) in runs {
        let outcome = run(&st, dir.path(), &daemon.url, &token, name, select);
        assert!(
            outcome.success,
            "schemathesis ({name}) found problems:\n{}",
            outcome.output
        );
        let server_errors = outcome.statuses.iter().filter(|s| **s >= 500).count();
        assert_eq!(
            server_errors, 0,
            "{server_errors} answers were 5xx ({name}):\n{}",
            outcome.output
        );
        let ok = outcome
            .statuses
            .iter()
            .filter(|s| (200..300).contains(*s))
            .count();
        assert!(
            ok * 10 >= outcome.statuses.len(),
            "only {ok} of {} answers were 2xx ({name}): the fuzzing barely reached the handlers",
            outcome.statuses.len()
        );
        println!(
            "schemathesis ({name}): {} test cases, {} requests, {ok} answered 2xx",
            outcome.generated,
            outcome.statuses.len()
        );
        generated += outcome.generated;
        requests += outcome.statuses.len();
        if name == "main" {
            // Still a meaningful run to the end: the coordinator's token was never revoked.
            Api::new(&daemon.url, &token)
                .get("/v1/teams/qa/agents")
                .await
                .expect_status(200);
        }
    }
    assert!(
        generated >= MIN_REQUESTS && requests >= MIN_REQUESTS,
        "schemathesis made {requests} requests ({generated} test cases); at least {MIN_REQUESTS} are required"
    );
}
