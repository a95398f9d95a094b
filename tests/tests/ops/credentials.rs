//! A PostgreSQL password never reaches the log, whichever form carries it: the URL's userinfo
//! or its `?password=` query, on the start-up line of a daemon that connected, on the error
//! of one that could not, and on the error of one whose URL does not even parse.

use huddle_tests::process::huddled_binary;
use huddle_tests::ADMIN;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

const SECRET: &str = "s3cret-never-logged";

fn start(database_url: &str) -> (Child, Receiver<String>, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut child = Command::new(huddled_binary().expect("huddled is built"))
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .env("HUDDLE_DATABASE_URL", database_url)
        .env("HUDDLE_ADMIN_TOKEN", ADMIN)
        .env("HUDDLE_LOG", "debug")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting huddled");
    let (tx, lines) = channel();
    for pipe in [
        Box::new(child.stderr.take().expect("stderr")) as Box<dyn std::io::Read + Send>,
        Box::new(child.stdout.take().expect("stdout")),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
    }
    (child, lines, dir)
}

/// Every line up to (and including) the first that satisfies `wanted`, or up to the exit.
fn lines_until(lines: &Receiver<String>, wanted: impl Fn(&str) -> bool) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    while let Ok(line) = lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        let done = wanted(&line);
        seen.push(line);
        if done {
            break;
        }
    }
    seen
}

fn assert_no_secret(seen: &[String]) {
    for line in seen {
        assert!(!line.contains(SECRET), "a password in the log: {line}");
    }
}

#[tokio::test]
async fn a_connected_daemon_logs_its_database_url_without_the_password() {
    let url = huddle_tests::pg::fresh_database().await;
    // The test server trusts local connections: the password is carried, not checked.
    let url = format!("{url}?password={SECRET}&application_name=huddle-credentials");
    let (mut child, lines, _dir) = start(&url);
    let seen = lines_until(&lines, |l| l.contains("huddled listening on"));
    let _ = child.kill();
    let _ = child.wait();
    let listening = seen
        .iter()
        .find(|l| l.contains("huddled listening on"))
        .unwrap_or_else(|| panic!("no start-up line; saw {seen:#?}"));
    assert!(listening.contains("password=***"), "{listening}");
    assert_no_secret(&seen);
}

#[tokio::test]
async fn a_daemon_that_cannot_connect_names_the_database_without_the_password() {
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    let url = format!("postgres://huddle:{SECRET}@127.0.0.1:1/huddle?password={SECRET}");
    let (mut child, lines, _dir) = start(&url);
    let seen = lines_until(&lines, |l| l.contains("127.0.0.1:1"));
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        seen.iter().any(|l| l.contains("127.0.0.1:1")),
        "the connection error names the database; saw {seen:#?}"
    );
    assert_no_secret(&seen);
}

#[tokio::test]
async fn a_database_url_that_does_not_parse_is_named_without_the_password() {
    // A bad port, an unclosed `[`, and a password with an unescaped `/` (which ends the
    // authority, so the URL parser sees a host `huddle` with the port `s3cret-…`).
    for (url, named) in [
        (
            format!("postgres://huddle:{SECRET}@db.invalid:99999/huddle"),
            "db.invalid:99999/huddle",
        ),
        (
            format!("postgres://huddle:{SECRET}@[::1:5432/huddle?password={SECRET}"),
            "[::1:5432/huddle",
        ),
        (
            format!("postgres://huddle:{SECRET}/x@db.invalid:5432/huddle"),
            "db.invalid:5432/huddle",
        ),
    ] {
        let (mut child, lines, _dir) = start(&url);
        let seen = lines_until(&lines, |l| l.contains(named));
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            seen.iter().any(|l| l.contains(named)),
            "the error names the database ({named}); saw {seen:#?}"
        );
        assert_no_secret(&seen);
    }
}
