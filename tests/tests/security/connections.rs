//! Connections: a head that never completes and an idle keep-alive connection are closed after
//! `head_timeout_ms`; past `max_connections` a client gets 503 in the API's error shape, and past
//! `max_connections_per_address` a client of one address does, while others are still served;
//! an oversized head gets 431 in the API's error shape, at the documented 32 KiB.

use huddle_tests::{eventually, TestDaemon};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// Reads until the daemon closes the connection; fails the test if it stays open 30 s.
pub(crate) async fn read_to_close(tcp: &mut TcpStream) -> String {
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), tcp.read_to_end(&mut out))
        .await
        .expect("the daemon closed the connection")
        .ok();
    String::from_utf8_lossy(&out).into_owned()
}

/// The status and JSON body of a raw HTTP response.
pub(crate) fn parse(response: &str) -> (u16, Value) {
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = response.split("\r\n\r\n").nth(1).unwrap_or("");
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

#[tokio::test]
async fn unfinished_heads_and_idle_connections_are_closed() {
    let d = TestDaemon::start_with(|s| s.server.head_timeout_ms = 1_000).await;
    let mut slow = TcpStream::connect(d.addr).await.unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    read_to_close(&mut slow).await;

    let mut idle = TcpStream::connect(d.addr).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let answered = read_to_close(&mut idle).await;
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
}

#[tokio::test]
async fn past_the_connection_cap_clients_get_503_in_the_api_shape() {
    let d = TestDaemon::start_with(|s| s.server.max_connections = 4).await;
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(TcpStream::connect(d.addr).await.unwrap());
    }
    // Accepted in order, after the four held ones.
    let mut extra = TcpStream::connect(d.addr).await.unwrap();
    let (status, body) = parse(&read_to_close(&mut extra).await);
    assert_eq!(status, 503);
    assert_eq!(body["error"]["code"], "too_many_connections");
    // A held connection still works, and closing one frees its slot.
    let mut first = held.remove(0);
    first
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(parse(&read_to_close(&mut first).await).0, 200);
    let url = format!("{}/healthz", d.url);
    eventually(30, "a freed slot serves a new client", || {
        let url = url.clone();
        async move {
            let client = reqwest::Client::new();
            matches!(client.get(&url).send().await, Ok(r) if r.status() == 200)
        }
    })
    .await;
}

/// A connection to the daemon from another loopback address (Linux answers all of 127/8).
async fn connect_from(source: &str, daemon: std::net::SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
    socket.connect(daemon).await.unwrap()
}

#[tokio::test]
async fn a_client_reconnecting_in_a_loop_leaves_other_addresses_their_slots() {
    let d = TestDaemon::start_with(|s| {
        s.server.max_connections = 16;
        s.server.max_connections_per_address = 4;
        s.server.head_timeout_ms = 1_000;
    })
    .await;
    // The attacker: 24 loops, each reconnecting as soon as its connection is closed (by the head
    // timeout, or at once with a 503), never sending a request.
    let stop = Arc::new(AtomicBool::new(false));
    let refused = Arc::new(AtomicUsize::new(0));
    let mut loops = Vec::new();
    for _ in 0..24 {
        let (stop, refused, addr) = (stop.clone(), refused.clone(), d.addr);
        loops.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let mut tcp = connect_from("127.0.0.2", addr).await;
                let mut out = Vec::new();
                let _ = tcp.read_to_end(&mut out).await;
                if out.starts_with(b"HTTP/1.1 503") {
                    refused.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    let seen = refused.clone();
    eventually(30, "the attacker's address meets its cap", || {
        let seen = seen.clone();
        async move { seen.load(Ordering::Relaxed) > 0 }
    })
    .await;
    // Meanwhile every new connection of another client is served.
    for n in 0..30 {
        let mut tcp = connect_from("127.0.0.1", d.addr).await;
        tcp.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let answer = read_to_close(&mut tcp).await;
        assert!(
            answer.starts_with("HTTP/1.1 200"),
            "connection {n}: {answer}"
        );
    }
    stop.store(true, Ordering::Relaxed);
    for l in loops {
        l.await.unwrap();
    }
    let (status, body) = {
        // The refusal names the cap it met.
        let mut held = Vec::new();
        for _ in 0..4 {
            held.push(connect_from("127.0.0.3", d.addr).await);
        }
        let mut extra = connect_from("127.0.0.3", d.addr).await;
        parse(&read_to_close(&mut extra).await)
    };
    assert_eq!(status, 503);
    assert_eq!(body["error"]["code"], "too_many_connections");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("max_connections_per_address"), "{message}");
}

#[tokio::test]
async fn an_oversized_head_gets_431_in_the_api_shape_at_32_kib() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let head = |padding: usize| {
        format!(
            "GET /v1/teams/qa/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nConnection: close\r\nX-Pad: {}\r\n\r\n",
            c.token,
            "a".repeat(padding)
        )
    };
    // Just under 32 KiB in all: served.
    let base = head(0).len();
    let mut tcp = TcpStream::connect(d.addr).await.unwrap();
    tcp.write_all(head(32 * 1024 - base - 64).as_bytes())
        .await
        .unwrap();
    assert_eq!(parse(&read_to_close(&mut tcp).await).0, 200);
    // Just over: 431 with the API's error body.
    let mut tcp = TcpStream::connect(d.addr).await.unwrap();
    tcp.write_all(head(32 * 1024 - base + 1).as_bytes())
        .await
        .unwrap();
    let (status, body) = parse(&read_to_close(&mut tcp).await);
    assert_eq!(status, 431);
    assert_eq!(body["error"]["code"], "head_too_large", "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("32 KiB"));
    // More header fields than hyper takes: hyper's own 431, in the API's shape too.
    let many: String = (0..150).map(|i| format!("X-H{i}: v\r\n")).collect();
    let mut tcp = TcpStream::connect(d.addr).await.unwrap();
    tcp.write_all(format!("GET /healthz HTTP/1.1\r\nHost: x\r\n{many}\r\n").as_bytes())
        .await
        .unwrap();
    let (status, body) = parse(&read_to_close(&mut tcp).await);
    assert_eq!(status, 431);
    assert_eq!(body["error"]["code"], "head_too_large", "{body}");
}
