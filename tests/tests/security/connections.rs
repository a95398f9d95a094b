//! Connections: a head that never completes and an idle keep-alive connection are closed after
//! `head_timeout_ms`; past `max_connections` a client gets 503 in the API's error shape; an
//! oversized head gets 431 in the API's error shape, at the documented 32 KiB.

use huddle_tests::{eventually, TestDaemon};
use serde_json::Value;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

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
