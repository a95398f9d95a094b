//! `huddled` as a real child process: start-up line, generated admin token, flags, config
//! errors, and a clean exit on SIGTERM.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The workspace's `huddled` binary, built by `cargo build --workspace` (scripts/test does).
fn huddled() -> PathBuf {
    huddle_tests::process::huddled_binary().unwrap_or_else(|e| panic!("{e}"))
}

/// Starts huddled and returns it with a channel of its log lines.
fn start(args: &[&str]) -> (Child, mpsc::Receiver<String>) {
    start_logging(args, "info")
}

fn start_logging(args: &[&str], level: &str) -> (Child, mpsc::Receiver<String>) {
    let mut child = Command::new(huddled())
        .args(args)
        .env_remove("HUDDLE_ADMIN_TOKEN")
        .env("HUDDLE_LOG", level)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("huddled starts");
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// Waits for a log line containing `needle`; returns it.
fn wait_for(lines: &mpsc::Receiver<String>, needle: &str) -> String {
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("no log line with {needle:?}"));
        if line.contains(needle) {
            return line;
        }
    }
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    for _ in 0..3000 {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().ok();
    panic!("huddled did not exit within 30 s");
}

#[test]
fn huddled_starts_with_no_setup_and_exits_cleanly_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (mut child, lines) = start(&[
        "--listen",
        "127.0.0.1:0",
        "--data-dir",
        data.to_str().unwrap(),
    ]);
    let line = wait_for(&lines, "listening on");
    assert!(
        !line.contains('\u{1b}'),
        "no colour codes when not a terminal: {line:?}"
    );
    let addr = line
        .split("http://")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    assert!(
        line.contains(&data.join("huddle.db").display().to_string()),
        "names the data: {line}"
    );
    let token_file = data.join("admin-token");
    assert!(
        line.contains(&token_file.display().to_string()),
        "names the admin token file: {line}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&token_file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let token = std::fs::read_to_string(&token_file)
        .unwrap()
        .trim()
        .to_string();

    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let admin = huddle_tests::Api::new(&format!("http://{addr}"), &token);
        admin
            .post("/v1/teams", serde_json::json!({"name": "qa"}))
            .await
            .expect_status(201);
    });

    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = wait_exit(&mut child);
    assert!(status.success(), "exit status {status:?}");
    wait_for(&lines, "database closed");

    // The same directory and token serve again, with the team still there.
    let (mut child, lines) = start(&[
        "--listen",
        "127.0.0.1:0",
        "--data-dir",
        data.to_str().unwrap(),
    ]);
    let line = wait_for(&lines, "listening on");
    let addr = line
        .split("http://")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    rt.block_on(async {
        let admin = huddle_tests::Api::new(&format!("http://{addr}"), &token);
        admin
            .post("/v1/teams", serde_json::json!({"name": "qa"}))
            .await
            .expect_error(409, "duplicate_team");
    });
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(wait_exit(&mut child).success());
}

#[test]
fn a_bad_config_file_or_busy_port_is_a_one_line_error_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("huddle.toml");
    std::fs::write(&config, "[tasks]\nleese_ms = 5\n").unwrap();
    let out = Command::new(huddled())
        .args(["--config", config.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("huddle.toml") && err.contains("leese_ms"),
        "{err}"
    );

    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let out = Command::new(huddled())
        .args([
            "--listen",
            &addr,
            "--data-dir",
            dir.path().join("d").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(&addr));
}

#[test]
fn tokens_never_reach_the_log_even_at_trace_level() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (mut child, lines) = start_logging(
        &[
            "--listen",
            "127.0.0.1:0",
            "--data-dir",
            data.to_str().unwrap(),
        ],
        "trace",
    );
    let line = wait_for(&lines, "listening on");
    let addr = line
        .split("http://")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let admin_token = std::fs::read_to_string(data.join("admin-token"))
        .unwrap()
        .trim()
        .to_string();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let agent_token = rt.block_on(async {
        let url = format!("http://{addr}");
        let admin = huddle_tests::Api::new(&url, &admin_token);
        admin
            .post("/v1/teams", serde_json::json!({"name": "qa"}))
            .await
            .expect_status(201);
        let r = admin
            .post(
                "/v1/teams/qa/agents",
                serde_json::json!({"name": "c", "role": "coordinator"}),
            )
            .await
            .expect_status(201);
        let token = r.body["token"].as_str().unwrap().to_string();
        let c = huddle_tests::Api::new(&url, &token).in_team("qa");
        c.post(
            &c.t("/tasks"),
            serde_json::json!({"prefix": "TEST", "subject": "s"}),
        )
        .await
        .expect_status(201);
        c.post(&c.t("/tasks"), serde_json::json!({"bad": true}))
            .await
            .expect_error(400, "invalid_field");
        c.get("/v1/teams/qa/nope")
            .await
            .expect_error(404, "not_found");
        let wrong = huddle_tests::Api::new(&url, &format!("{token}x")).in_team("qa");
        wrong
            .get(&wrong.t("/tasks"))
            .await
            .expect_error(401, "unauthorized");
        c.post(&c.t("/agents/c/rotate"), serde_json::json!({}))
            .await
            .expect_status(200);
        token
    });
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(wait_exit(&mut child).success());
    let log: Vec<String> = lines.try_iter().collect();
    assert!(log.len() > 5, "trace logging produced lines");
    for (what, secret) in [("admin token", &admin_token), ("agent token", &agent_token)] {
        let hex = secret.trim_start_matches("hud_");
        assert!(
            !log.iter().any(|l| l.contains(hex)),
            "the {what} appears in the log"
        );
    }
}
