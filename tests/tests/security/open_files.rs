//! Descriptors: a `huddled` started under a low open-file limit (`ulimit -n`) keeps its
//! connection cap under it — the client past it gets the 503, not a hang — and says so at start;
//! the separate `/metrics` listener, which needs no token, has a cap of its own, so flooding it
//! with unfinished heads leaves the API answering.

use super::connections::{parse, read_to_close};
use huddle_tests::process::huddled_binary;
use huddle_tests::ADMIN;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// The daemon's own log lines up to and including the ones naming its addresses.
struct Started {
    child: Child,
    api: String,
    metrics: Option<String>,
    log: Vec<String>,
    _dir: tempfile::TempDir,
}

impl Drop for Started {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `huddled` in a shell that first sets the open-file limit with `ulimit`
/// (`-n N`: soft and hard; `-Sn N`: soft only).
fn start(ulimit: &str, metrics: bool) -> Started {
    let dir = tempfile::tempdir().expect("temp dir");
    let binary = huddled_binary().expect("huddled is built");
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("ulimit {ulimit} && exec \"$0\" \"$@\""))
        .arg(binary)
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .env("HUDDLE_ADMIN_TOKEN", ADMIN)
        .env("HUDDLE_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if metrics {
        command.env("HUDDLE_METRICS_LISTEN", "127.0.0.1:0");
    }
    let mut child = command.spawn().expect("starting huddled");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let (mut api, mut metrics_at, mut log) = (None, None, Vec::new());
    // Both address lines come before the daemon serves; a daemon that exits ends the loop.
    while api.is_none() || (metrics && metrics_at.is_none()) {
        let Some(Ok(line)) = lines.next() else {
            panic!("huddled exited before listening; its log: {log:#?}")
        };
        if let Some(at) = address_after(&line, "huddled listening on http://") {
            api = Some(at);
        }
        if let Some(at) = address_after(&line, "metrics at http://") {
            metrics_at = Some(at.trim_end_matches("/metrics").to_string());
        }
        log.push(line);
    }
    // Keep draining so the daemon never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines.map_while(Result::ok) {});
    Started {
        child,
        api: api.expect("api address"),
        metrics: metrics_at,
        log,
        _dir: dir,
    }
}

fn address_after(line: &str, prefix: &str) -> Option<String> {
    let rest = line.split(prefix).nth(1)?;
    Some(rest.split_whitespace().next()?.to_string())
}

async fn get(addr: &str, path: &str) -> String {
    let mut tcp = TcpStream::connect(addr).await.expect("connect");
    tcp.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await
    .expect("send");
    read_to_close(&mut tcp).await
}

#[tokio::test]
async fn under_a_low_open_file_limit_the_cap_shrinks_and_the_next_client_gets_503() {
    // 400 descriptors: under twice the 256 the daemon keeps, so half go to API connections.
    let d = start("-n 400", false);
    let warning = d
        .log
        .iter()
        .find(|l| l.contains("max_connections") && l.contains("open-file limit"))
        .unwrap_or_else(|| panic!("no warning at start; log: {:#?}", d.log));
    assert!(warning.contains("200"), "{warning}");

    let mut held = Vec::new();
    for _ in 0..200 {
        held.push(TcpStream::connect(&d.api).await.expect("connect"));
    }
    // Accepted in order, after the held ones: refused at once, in the API's shape.
    let (status, body) = parse(&get(&d.api, "/healthz").await);
    assert_eq!(status, 503);
    assert_eq!(body["error"]["code"], "too_many_connections");

    held.clear();
    let api = d.api.clone();
    huddle_tests::eventually(30, "the closed connections give their slots back", || {
        let api = api.clone();
        async move { get(&api, "/healthz").await.starts_with("HTTP/1.1 200") }
    })
    .await;
}

#[tokio::test]
async fn a_flood_of_unfinished_heads_on_the_metrics_address_leaves_the_api_answering() {
    let d = start("-n 1024", true);
    let metrics = d.metrics.clone().expect("metrics address");
    let mut held = Vec::new();
    for _ in 0..64 {
        let mut tcp = TcpStream::connect(&metrics).await.expect("connect");
        tcp.write_all(b"GET /metrics HTTP/1.1\r\nHo")
            .await
            .expect("send");
        held.push(tcp);
    }
    let (status, body) = parse(&get(&metrics, "/metrics").await);
    assert_eq!(status, 503, "the metrics listener has a cap of its own");
    assert_eq!(body["error"]["code"], "too_many_connections");
    let answered = get(&d.api, "/healthz").await;
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
}

#[tokio::test]
async fn a_low_soft_limit_is_raised_to_the_hard_one_without_a_warning() {
    let hard: u64 = String::from_utf8(
        Command::new("sh")
            .args(["-c", "ulimit -Hn"])
            .output()
            .expect("ulimit")
            .stdout,
    )
    .expect("utf-8")
    .trim()
    .parse()
    .unwrap_or(u64::MAX);
    assert!(
        hard > 4_096 + 256,
        "this test needs a hard open-file limit above 4352 (is {hard})"
    );
    let d = start("-Sn 300", false);
    assert!(
        !d.log.iter().any(|l| l.contains("open-file limit")),
        "the soft limit was raised, so the default cap fits: {:#?}",
        d.log
    );
    let answered = get(&d.api, "/healthz").await;
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
}
