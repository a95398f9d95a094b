//! A subscriber that vanishes from the network (no FIN, no RST: a closed laptop, a NAT that
//! forgot the flow) frees its stream slot after `[server] peer_timeout_ms`, not after TCP's
//! own retransmission limit of about 15 minutes. The vanishing is real: a firewall rule drops
//! every packet the daemon sends to the client's port, as a dead link would. Both ways a
//! vanished peer is found are tested: data left unacknowledged (`TCP_USER_TIMEOUT`) and, on a
//! stream with nothing to send, keepalive probes left unanswered.

use huddle_tests::{eventually, TestDaemon};
use std::process::Command;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Drops the daemon's packets to one client connection while it lives: they leave (the
/// daemon's sends succeed) and nothing comes back, as over a dead link. (Dropped on the way out
/// instead, a send fails locally and TCP keeps probing without ever timing out.)
struct Blackhole {
    rule: Vec<String>,
}

/// Tags this test's rules, followed by the test process's id, so a run killed before it could
/// remove its rule has it removed by a later run, and tests running side by side leave each
/// other's rules alone.
const TAG: &str = "huddle-test-vanished-peer";

fn tag() -> String {
    format!("{TAG}-{}", std::process::id())
}

impl Blackhole {
    fn iptables(action: &str, rule: &[String]) -> bool {
        Command::new("iptables")
            .args(["-w", action, "INPUT"])
            .args(rule)
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Packets from the daemon's port to the client's, on loopback.
    fn install(daemon: u16, client: u16) -> Blackhole {
        let rule: Vec<String> = [
            "-i",
            "lo",
            "-p",
            "tcp",
            "-s",
            "127.0.0.1",
            "--sport",
            &daemon.to_string(),
            "--dport",
            &client.to_string(),
            "-m",
            "comment",
            "--comment",
            &tag(),
            "-j",
            "DROP",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert!(
            Blackhole::iptables("-I", &rule),
            "iptables refused the rule"
        );
        Blackhole { rule }
    }

    /// Removes rules left behind by runs whose process is gone.
    fn remove_stale() {
        let listed = Command::new("iptables")
            .args(["-w", "-S", "INPUT"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        // A rule tagged without a process id is from a run before the ids were added.
        let stale = |line: &&str| {
            line.split_whitespace()
                .map(|word| word.trim_matches('"'))
                .find_map(|word| {
                    (word == TAG)
                        .then_some(None)
                        .or_else(|| word.strip_prefix(&format!("{TAG}-")).map(Some))
                })
                .is_some_and(|pid| {
                    pid.is_none_or(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists())
                })
        };
        for line in listed.lines().filter(stale) {
            let rule: Vec<String> = line
                .split_whitespace()
                .skip(2) // "-A INPUT"
                .map(|s| s.trim_matches('"').to_string())
                .collect();
            Blackhole::iptables("-D", &rule);
        }
    }
}

impl Drop for Blackhole {
    fn drop(&mut self) {
        Blackhole::iptables("-D", &self.rule);
    }
}

/// Whether this machine lets the test drop packets (root and iptables). Under `CI=true` it
/// must: `scripts/install-test-deps` installs iptables and CI runs as root.
fn can_blackhole() -> bool {
    let able = Command::new("iptables")
        .args(["-w", "-L", "INPUT", "-n"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !able {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "this test needs iptables and root (scripts/install-test-deps installs iptables)"
        );
        eprintln!("SKIPPED outside CI: iptables is missing or this user is not root");
    }
    able
}

#[tokio::test]
async fn a_subscriber_that_vanished_frees_its_stream_slot() {
    // Something to send, so the daemon has data left unacknowledged.
    vanished_subscriber_frees_its_slot(1).await;
}

/// The same with nothing to send for an hour: TCP keepalive probes (sent after half the peer
/// timeout of silence) find the link dead.
#[tokio::test]
async fn an_idle_subscriber_that_vanished_frees_its_stream_slot() {
    vanished_subscriber_frees_its_slot(3_600).await;
}

/// A subscriber of a daemon sending a keep-alive every `keepalive_secs` vanishes; its slot is
/// freed within the deadline (a minute; the peer timeout is 2 s).
async fn vanished_subscriber_frees_its_slot(keepalive_secs: u64) {
    if !can_blackhole() {
        return;
    }
    Blackhole::remove_stale();
    let d = TestDaemon::start_with(|s| {
        s.limits.max_streams_per_team = 1;
        s.server.peer_timeout_ms = 2_000;
        s.streams.keepalive_secs = keepalive_secs;
    })
    .await;
    let qa = d.team("qa").await;
    let mut vanishing = TcpStream::connect(d.addr).await.unwrap();
    let head = format!(
        "GET {} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nAccept: text/event-stream\r\n\r\n",
        qa.t("/events"),
        qa.token
    );
    vanishing.write_all(head.as_bytes()).await.unwrap();
    let mut first = [0u8; 12];
    vanishing.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 200", "the stream opened");
    // The team's one slot is taken.
    qa.get(&qa.t("/events"))
        .await
        .expect_error(429, "too_many_streams");

    let _dead_link = Blackhole::install(d.addr.port(), vanishing.local_addr().unwrap().port());
    let url = format!("{}{}", d.url, qa.t("/events"));
    eventually(60, "the vanished subscriber's slot is freed", || {
        let (url, token) = (url.clone(), qa.token.clone());
        async move {
            let answer = reqwest::Client::new()
                .get(&url)
                .bearer_auth(token)
                .send()
                .await;
            matches!(answer, Ok(r) if r.status() == 200)
        }
    })
    .await;
    // The client never closed its socket: only the daemon's timeout ended the stream.
    drop(vanishing);
}
