//! A real `huddled` process with `HUDDLE_LOG_FORMAT=json` and `/metrics` on an address of its
//! own: every line it logs is a JSON object, each request's `x-request-id` (the client's, or
//! one it made) comes back on the answer and sits in the request's log lines; the metrics
//! address answers without a token, and the API's address no longer serves `/metrics`.

use huddle_tests::process::huddled_binary;
use huddle_tests::ADMIN;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// The child and its stderr, line by line, each parsed as JSON (a line that is not fails).
struct Daemon {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<Value>,
    _dir: tempfile::TempDir,
}

impl Daemon {
    fn start() -> Daemon {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut child = Command::new(huddled_binary().expect("huddled is built"))
            .args(["--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.path())
            .env("HUDDLE_LOG_FORMAT", "json")
            .env("HUDDLE_LOG", "info,tower_http=debug")
            .env("HUDDLE_METRICS_LISTEN", "127.0.0.1:0")
            .env("HUDDLE_ADMIN_TOKEN", ADMIN)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting huddled");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Daemon {
            child,
            lines,
            seen: Vec::new(),
            _dir: dir,
        }
    }

    /// Reads log lines until one satisfies `wanted` (generous deadline); returns it.
    fn wait_for(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(line) = self.seen.iter().find(|l| wanted(l)) {
            return line.clone();
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no log line {what}; saw {:#?}", self.seen));
            let parsed: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("a log line that is not JSON ({e}): {line}"));
            assert!(parsed.is_object(), "{line}");
            self.seen.push(parsed.clone());
            if wanted(&parsed) {
                return parsed;
            }
        }
    }

    /// The `http://…` address in the first message starting with `prefix`.
    fn address(&mut self, prefix: &str) -> String {
        let line = self.wait_for(prefix, |l| {
            l["message"].as_str().is_some_and(|m| m.starts_with(prefix))
        });
        let message = line["message"].as_str().unwrap_or_default();
        let rest = message.split("http://").nth(1).expect("an address");
        let addr = rest.split(['/', ' ']).next().unwrap_or_default();
        format!("http://{addr}")
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn request_id_of(line: &Value) -> Option<&str> {
    line["span"]["request_id"].as_str()
}

/// A new agent of team `qa`; its token.
async fn agent_token(client: &reqwest::Client, api: &str, name: &str, role: &str) -> String {
    let created: serde_json::Value = client
        .post(format!("{api}/v1/teams/qa/agents"))
        .bearer_auth(ADMIN)
        .json(&serde_json::json!({"name": name, "role": role}))
        .send()
        .await
        .expect("request")
        .json()
        .await
        .expect("json");
    created["token"].as_str().expect("a token").to_string()
}

#[tokio::test]
async fn json_logs_carry_each_requests_id_and_metrics_listen_apart() {
    let mut d = Daemon::start();
    let api = d.address("huddled listening on");
    let metrics = d.address("metrics at");
    let client = reqwest::Client::new();

    // The client's id comes back and is in the request's log lines.
    let id = format!("test-{}", uuid::Uuid::new_v4());
    let response = client
        .post(format!("{api}/v1/teams"))
        .bearer_auth(ADMIN)
        .header("x-request-id", &id)
        .json(&serde_json::json!({"name": "qa"}))
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 201);
    assert_eq!(response.headers()["x-request-id"], id.as_str());
    let line = d.wait_for("with the client's request id", |l| {
        request_id_of(l) == Some(id.as_str())
    });
    assert_eq!(line["span"]["path"], "/v1/teams", "{line}");
    assert!(
        line["timestamp"].is_string() && line["level"].is_string(),
        "{line}"
    );

    // An agent's request: once its token is read, its lines name the agent too.
    let token = agent_token(&client, &api, "tester-1", "tester").await;
    let agent_id = format!("test-{}", uuid::Uuid::new_v4());
    let response = client
        .get(format!("{api}/v1/teams/qa/tasks"))
        .bearer_auth(&token)
        .header("x-request-id", &agent_id)
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 200);
    d.wait_for("the agent's request, named", |l| {
        request_id_of(l) == Some(agent_id.as_str()) && l["span"]["agent"] == "tester-1"
    });

    // A request on one task names it on the same span.
    let lead = agent_token(&client, &api, "lead", "coordinator").await;
    let created = client
        .post(format!("{api}/v1/teams/qa/tasks"))
        .bearer_auth(&lead)
        .json(&serde_json::json!({"id": "TEST-1", "subject": "logged"}))
        .send()
        .await
        .expect("request");
    assert_eq!(created.status(), 201);
    let task_id = format!("test-{}", uuid::Uuid::new_v4());
    let response = client
        .patch(format!("{api}/v1/teams/qa/tasks/TEST-1"))
        .bearer_auth(&lead)
        .header("x-request-id", &task_id)
        .json(&serde_json::json!({"subject": "logged again"}))
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 200);
    d.wait_for("the task's request, named", |l| {
        request_id_of(l) == Some(task_id.as_str()) && l["span"]["task"] == "TEST-1"
    });

    // Without one, the daemon makes one, answers with it and logs it.
    let response = client
        .get(format!("{api}/healthz"))
        .send()
        .await
        .expect("request");
    let made = response.headers()["x-request-id"]
        .to_str()
        .expect("ascii")
        .to_string();
    assert!(uuid::Uuid::parse_str(&made).is_ok(), "{made}");
    d.wait_for("with the made request id", |l| {
        request_id_of(l) == Some(made.as_str())
    });

    // `/metrics` on its own address without a token; not on the API's address.
    let response = client
        .get(format!("{metrics}/metrics"))
        .send()
        .await
        .expect("scrape");
    assert_eq!(response.status(), 200);
    let text = response.text().await.expect("text");
    assert!(
        text.lines().any(|l| l.starts_with(
            "huddle_http_requests_total{method=\"POST\",route=\"/v1/teams\",status=\"201\"}"
        )),
        "{text}"
    );
    let response = client
        .get(format!("{api}/metrics"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 404);
}
