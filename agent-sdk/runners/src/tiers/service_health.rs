//! A service's health wait: `GET` its health URL, else a TCP connect to its port, every interval
//! until it answers, exits or runs out of time; from inside the sandbox's network namespace when
//! the services are sandboxed (huddle cannot reach that loopback).

use crate::sandbox::NetNs;
use std::time::{Duration, Instant};

/// What a health check checks: `GET health`, else a TCP connect to `port`, from inside `net`
/// when the services are sandboxed (huddle cannot reach that loopback).
pub(super) struct Probe<'a> {
    pub health: Option<&'a str>,
    pub port: Option<u16>,
    pub net: Option<&'a NetNs>,
}

/// Polls until the service answers, exits, or `timeout` passes.
pub(super) async fn wait_healthy(
    child: &mut tokio::process::Child,
    probe: &Probe<'_>,
    timeout: Duration,
    interval: Duration,
) -> Result<(), String> {
    let (health, port) = (probe.health, probe.port);
    let client = reqwest::Client::builder()
        .timeout(interval.max(Duration::from_secs(2)))
        .build()
        .map_err(|e| format!("no HTTP client: {e}"))?;
    let started = Instant::now();
    loop {
        if let Ok(Some(exit)) = child.try_wait() {
            return Err(format!("it exited ({exit}) before it was healthy"));
        }
        let check = match (health, port, probe.net) {
            (Some(url), _, Some(net)) => {
                net.http_ok(url, interval.max(Duration::from_secs(2))).await
            }
            (None, Some(p), Some(net)) => match net.listening(p) {
                true => Ok(()),
                false => Err(format!(
                    "TCP 127.0.0.1:{p}: nothing listens (in the sandbox)"
                )),
            },
            (Some(url), _, None) => match client.get(url).send().await {
                Ok(r) if r.status().is_success() || r.status().is_redirection() => Ok(()),
                Ok(r) => Err(format!("GET {url} answered {}", r.status())),
                Err(e) => Err(format!("GET {url}: {}", error_chain(&e))),
            },
            (None, Some(p), None) => tokio::net::TcpStream::connect(("127.0.0.1", p))
                .await
                .map(drop)
                .map_err(|e| format!("TCP 127.0.0.1:{p}: {e}")),
            (None, None, _) => Err("nothing to check".into()),
        };
        let last = match check {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        if started.elapsed() + interval > timeout {
            return Err(format!(
                "not healthy after {}s; last check: {last}",
                timeout.as_secs()
            ));
        }
        // The poll interval itself: the service gets time to come up between checks.
        tokio::time::sleep(interval).await;
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
