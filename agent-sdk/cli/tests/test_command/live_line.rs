//! `huddle test`'s live line on a real terminal (util-linux `script` gives it a pty): the tests
//! done and the failures so far appear while the suite is still running — a test holds the run
//! open until this test has seen them — and a final line follows; with `--json`, or when the
//! output is not a terminal, nothing of it.

use crate::common::require_pytest;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A pytest project: one test passes, one fails, the third waits for `release` to exist.
fn held_project(dir: &Path) -> std::path::PathBuf {
    let release = dir.join("release");
    std::fs::write(dir.join("pytest.ini"), "[pytest]\n").unwrap();
    std::fs::create_dir(dir.join("tests")).unwrap();
    let text = [
        "import os",
        "import time",
        "",
        "def test_a():",
        "    assert True",
        "",
        "def test_b():",
        "    assert 1 == 2",
        "",
        "def test_c():",
        "    deadline = time.time() + 120",
        &format!(
            "    while not os.path.exists({:?}):",
            release.to_str().unwrap()
        ),
        "        assert time.time() < deadline, 'never released'",
        "        time.sleep(0.02)",
        "",
    ]
    .join("\n");
    std::fs::write(dir.join("tests/test_held.py"), text).unwrap();
    release
}

/// Not hidden (`tempfile`'s default `.tmp…`): pytest does not collect under a hidden directory.
fn project_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("huddle-live-")
        .tempdir()
        .unwrap()
}

/// `huddle test --project DIR EXTRA` under `script`; its terminal output, read as it comes.
fn on_a_terminal(dir: &Path, extra: &str) -> (std::process::Child, Arc<Mutex<String>>) {
    let command = format!(
        "'{}' test --project '{}' {extra}",
        env!("CARGO_BIN_EXE_huddle"),
        dir.display()
    );
    let mut child = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env_remove("HUDDLE_TOKEN")
        .env_remove("HUDDLE_TEAM")
        .env_remove(huddle_cli::live_line::FORCE_ENV)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("util-linux `script` is required by this test: apt-get install bsdutils");
    let seen = Arc::new(Mutex::new(String::new()));
    let (mut out, into) = (child.stdout.take().unwrap(), seen.clone());
    std::thread::spawn(move || {
        let mut chunk = [0u8; 4096];
        while let Ok(n) = out.read(&mut chunk) {
            if n == 0 {
                break;
            }
            into.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&chunk[..n]));
        }
    });
    (child, seen)
}

fn wait_for(seen: &Mutex<String>, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !seen.lock().unwrap().contains(what) {
        assert!(
            Instant::now() < deadline,
            "never saw {what:?} in: {}",
            seen.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_live_line_counts_tests_and_failures_while_the_suite_runs() {
    require_pytest();
    let project = project_dir();
    let release = held_project(project.path());
    let (mut child, seen) = on_a_terminal(project.path(), "");
    // test_c is still holding the run open: these counts can only have come while it runs.
    wait_for(&seen, "huddle test: 2 done, 1 failed… ");
    std::fs::write(&release, "").unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "{}", seen.lock().unwrap());
    wait_for(&seen, "huddle test: 3 run, 1 failed in ");
    let all = seen.lock().unwrap().clone();
    assert!(all.contains("(exit 1)"), "{all}");
    assert!(
        all.contains("pytest: 2 passed, 1 failed"),
        "the summary too: {all}"
    );
}

#[test]
fn json_or_a_pipe_gets_no_live_line() {
    require_pytest();
    let project = project_dir();
    std::fs::write(project.path().join("release"), "").unwrap();
    let release = held_project(project.path());
    assert!(release.exists());
    let (mut child, seen) = on_a_terminal(project.path(), "--json");
    child.wait().unwrap();
    wait_for(&seen, "\"summary\"");
    let json = seen.lock().unwrap().clone();
    assert!(!json.contains("huddle test: "), "{json}");

    let piped = Command::new(env!("CARGO_BIN_EXE_huddle"))
        .args(["test", "--project", project.path().to_str().unwrap()])
        .env_remove(huddle_cli::live_line::FORCE_ENV)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&piped.stderr);
    assert!(!stderr.contains("huddle test: "), "{stderr}");
    assert!(String::from_utf8_lossy(&piped.stdout).contains("pytest: 2 passed, 1 failed"));
}
