//! The tiers' services, started for real: a Python HTTP server on a port huddle picks
//! (`{port}`), checked over HTTP and over TCP, its log kept, its process group stopped; a
//! service that exits before it is healthy, with its log's tail.

use crate::common::require_tool;
use huddle_runners::tiers::project_file::ServiceSpec;
use huddle_runners::tiers::services::start_all;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

fn spec(command: &str, health: Option<&str>) -> ServiceSpec {
    ServiceSpec {
        command: command.into(),
        health: health.map(str::to_string),
        port: None,
        timeout_secs: Some(30),
        interval_secs: Some(1),
        cwd: None,
        env: BTreeMap::from([("GREETING".to_string(), "on {port}".to_string())]),
    }
}

fn env_of<'a>(env: &'a [(String, String)], key: &str) -> &'a str {
    env.iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("{key} in {env:?}"))
}

async fn refuses(port: &str) -> bool {
    tokio::net::TcpStream::connect(format!("127.0.0.1:{port}"))
        .await
        .is_err()
}

#[tokio::test]
async fn a_service_on_a_picked_port_is_healthy_logged_and_stopped() {
    require_tool("python3");
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("index.html"), "hello").unwrap();
    let logs = project.path().join("logs");
    for health in [Some("http://127.0.0.1:{port}/index.html"), None] {
        let specs = BTreeMap::from([(
            "web".to_string(),
            spec("python3 -m http.server {port} --bind 127.0.0.1", health),
        )]);
        let (running, statuses) = start_all(project.path(), &specs, &logs, &[], None)
            .await
            .unwrap();
        assert!(statuses[0].healthy, "{statuses:?}");
        let expected_check = if health.is_some() {
            "GET http://"
        } else {
            "TCP 127.0.0.1:"
        };
        assert!(
            statuses[0].check.starts_with(expected_check),
            "{}",
            statuses[0].check
        );
        let port = env_of(&running.env, "HUDDLE_SERVICE_WEB_PORT").to_string();
        assert_eq!(env_of(&running.env, "GREETING"), format!("on {port}"));
        if health.is_some() {
            let url = env_of(&running.env, "HUDDLE_SERVICE_URL");
            assert_eq!(url, format!("http://127.0.0.1:{port}"));
            let body = reqwest::get(format!("{url}/index.html"))
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            assert_eq!(body, "hello");
        }
        running.stop(Duration::from_secs(5)).await;
        assert!(refuses(&port).await, "the service is stopped");
        assert!(statuses[0].log.is_file());
    }
}

#[tokio::test]
async fn a_service_that_exits_is_unhealthy_with_its_log_tail_at_once() {
    require_tool("python3");
    let project = tempfile::tempdir().unwrap();
    let specs = BTreeMap::from([(
        "api".to_string(),
        spec(
            "python3 -c \"import sys; print('no database configured', flush=True); sys.exit(3)\"",
            Some("http://127.0.0.1:{port}/health"),
        ),
    )]);
    let (running, statuses) = start_all(project.path(), &specs, project.path(), &[], None)
        .await
        .unwrap();
    let s = &statuses[0];
    assert!(!s.healthy);
    assert!(s.problem.as_deref().unwrap().contains("exited"), "{s:?}");
    assert!(
        s.log_tail
            .as_deref()
            .unwrap()
            .contains("no database configured"),
        "{s:?}"
    );
    running.stop(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn dropping_the_running_services_stops_them() {
    require_tool("python3");
    let project = tempfile::tempdir().unwrap();
    let specs = BTreeMap::from([(
        "web".to_string(),
        spec("python3 -m http.server {port} --bind 127.0.0.1", None),
    )]);
    let (running, statuses) = start_all(project.path(), &specs, project.path(), &[], None)
        .await
        .unwrap();
    assert!(statuses[0].healthy);
    let port = env_of(&running.env, "HUDDLE_SERVICE_WEB_PORT").to_string();
    drop(running);
    // SIGKILL is delivered asynchronously: wait for the port to close, with a generous deadline.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !refuses(&port).await {
        assert!(
            Instant::now() < deadline,
            "port {port} still answers after drop"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Counts its starts in `starts`; then, by `mode`: `once` loses its port on the first start
/// (as Python words it), `always` on every start, `other` fails for another reason; otherwise
/// it serves HTTP on the port.
const FLAKY_SERVICE: &str = r#"
import os, sys, http.server, socketserver
port, mode = int(sys.argv[1]), sys.argv[2]
n = int(open('starts').read()) if os.path.exists('starts') else 0
open('starts', 'w').write(str(n + 1))
if mode == 'other':
    print('no database configured', flush=True)
    sys.exit(3)
if mode == 'always' or n == 0:
    print('OSError: [Errno 98] Address already in use', flush=True)
    sys.exit(1)
socketserver.TCPServer(('127.0.0.1', port), http.server.SimpleHTTPRequestHandler).serve_forever()
"#;

/// A port huddle picked is free when picked, not when the service binds it: a service that
/// lost it to another process is started again on another port (at most three starts); a
/// service that fails for any other reason is not started again.
#[tokio::test]
async fn a_service_that_lost_its_picked_port_is_started_again_on_another() {
    require_tool("python3");
    for (mode, healthy, starts) in [
        ("once", true, "2"),
        ("always", false, "3"),
        ("other", false, "1"),
    ] {
        let project = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join("service.py"), FLAKY_SERVICE).unwrap();
        let specs = BTreeMap::from([(
            "web".to_string(),
            spec(
                &format!("python3 service.py {{port}} {mode}"),
                Some("http://127.0.0.1:{port}/"),
            ),
        )]);
        let logs = project.path().join("logs");
        let (running, statuses) = start_all(project.path(), &specs, &logs, &[], None)
            .await
            .unwrap();
        assert_eq!(statuses[0].healthy, healthy, "{mode}: {statuses:?}");
        let counted = std::fs::read_to_string(project.path().join("starts")).unwrap();
        assert_eq!(counted, starts, "{mode}: starts");
        running.stop(Duration::from_secs(5)).await;
    }
}
