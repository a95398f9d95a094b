//! The services integration and e2e tiers need: started from `huddle.toml` (or detected),
//! polled until healthy, logged into the run directory, and stopped — the whole process
//! group — after the tier, whatever happened (also when the caller is cancelled: dropping
//! [`Running`] kills the groups).

use super::project_file::ServiceSpec;
use super::service_health::{wait_healthy, Probe};
use super::service_signals::{group_gone, signal, Signal};
use crate::error::RunnerError;
use crate::process::Invocation;
use crate::sandbox::{Jail, NetNs};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// Default time a service has to become healthy.
pub const DEFAULT_HEALTH_TIMEOUT: Duration = Duration::from_secs(60);
/// Default time between health checks.
pub const DEFAULT_HEALTH_INTERVAL: Duration = Duration::from_secs(2);
/// Lines of a service's log kept in a report when it did not become healthy.
const LOG_TAIL_LINES: usize = 20;

/// What happened to one service.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServiceStatus {
    /// Its name in `huddle.toml`.
    pub name: String,
    /// The argv it ran with.
    pub command: Vec<String>,
    /// Whether it became healthy.
    pub healthy: bool,
    /// What was checked (`GET http://…/health`, `TCP 127.0.0.1:8080`).
    pub check: String,
    /// Its log (stdout and stderr), in the run directory.
    pub log: PathBuf,
    /// Why it is not healthy, when it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// The last lines of its log, when it is not healthy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_tail: Option<String>,
}

/// Started services; stop them with [`Running::stop`] (dropping kills them too).
#[derive(Debug, Default)]
pub struct Running {
    children: Vec<(String, tokio::process::Child)>,
    /// Variables the tests get: `HUDDLE_SERVICE_URL`, `HUDDLE_SERVICE_<NAME>_URL`,
    /// `HUDDLE_SERVICE_<NAME>_PORT` and each service's `env`.
    pub env: Vec<(String, String)>,
    /// The sandbox's network namespace the services listen in, which the tests must join;
    /// `None` without a sandbox.
    pub net: Option<crate::sandbox::NetNs>,
}

impl Running {
    /// Whether every service's process is still running (none exited since it was healthy).
    pub fn all_alive(&mut self) -> bool {
        self.children
            .iter_mut()
            .all(|(_, child)| matches!(child.try_wait(), Ok(None)))
    }

    /// Stops every service's process group: SIGTERM, then SIGKILL after `grace`.
    pub async fn stop(mut self, grace: Duration) {
        for (_, child) in &mut self.children {
            // The group's id, kept: once the leader is reaped the child has no id, while
            // processes of its group (a sandbox's, a grandchild) may still be going.
            let group = child.id();
            signal(group, Signal::Term);
            let _ = tokio::time::timeout(grace, child.wait()).await;
            // Whatever is left in its group (a child that ignored SIGTERM) goes now.
            signal(group, Signal::Kill);
            let _ = child.wait().await;
            group_gone(group, grace).await;
        }
        self.children.clear();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        for (_, child) in &mut self.children {
            signal(child.id(), Signal::Kill);
        }
    }
}

/// Starts every service in `specs` (sorted by name), each logging to `<log_dir>/<name>.log`,
/// and waits for each to become healthy. Returns the running services and one status per
/// service; a service that does not become healthy stays in `Running` (so it is stopped with
/// the others) and its status says why, with its log's tail. With `sandbox` (the bwrap to use)
/// they run sandboxed, writing only in the project, in a network namespace of their own
/// ([`Running::net`]).
pub async fn start_all(
    project: &Path,
    specs: &BTreeMap<String, ServiceSpec>,
    log_dir: &Path,
    env: &[(String, String)],
    sandbox: Option<&Path>,
) -> Result<(Running, Vec<ServiceStatus>), RunnerError> {
    std::fs::create_dir_all(log_dir)
        .map_err(|e| RunnerError::io(format!("creating {}", log_dir.display()), e))?;
    let mut running = Running::default();
    let jail = match sandbox {
        Some(bwrap) => {
            let net = crate::sandbox::NetNs::create(bwrap).await?;
            running.net = Some(net.clone());
            let jail = Jail::new(bwrap.to_path_buf(), &[project])
                .in_net(Some(net))
                .keeping_go_builds(project);
            Some(jail.in_callers_session())
        }
        None => None,
    };
    let mut statuses = Vec::new();
    for (name, spec) in specs {
        let at = Target {
            project,
            log_dir,
            env,
            jail: jail.as_ref(),
        };
        let status = start_one(&at, name, spec, &mut running).await?;
        let healthy = status.healthy;
        statuses.push(status);
        if !healthy {
            // The tier cannot run: no point starting the rest.
            break;
        }
    }
    Ok((running, statuses))
}

/// Times a service on a port huddle picked is started again on another when it lost that port
/// to another process between the pick and its bind.
const PORT_ATTEMPTS: usize = 3;

/// Where and how the services start.
struct Target<'a> {
    project: &'a Path,
    log_dir: &'a Path,
    env: &'a [(String, String)],
    /// The sandbox they run in, if any.
    jail: Option<&'a Jail>,
}

async fn start_one(
    at: &Target<'_>,
    name: &str,
    spec: &ServiceSpec,
    running: &mut Running,
) -> Result<ServiceStatus, RunnerError> {
    let picks_port = spec.command.contains("{port}")
        || spec.health.as_deref().is_some_and(|h| h.contains("{port}"));
    let mut attempt = 1;
    loop {
        let port = if picks_port {
            Some(free_port()?)
        } else {
            spec.port
        };
        let started = start_on(at, name, spec, port).await?;
        let (status, child, outcome) = match started {
            Started::NotSpawned(status) => return Ok(status),
            Started::Spawned(status, child, outcome) => (status, child, outcome),
        };
        // A picked port is free when picked, not when bound: another process (a test run's
        // parallel clients, an outgoing connection) may take it first. Only that is retried.
        if outcome.is_err() && picks_port && attempt < PORT_ATTEMPTS && lost_its_port(&status.log) {
            attempt += 1;
            let mut child = child;
            let _ = child.kill().await;
            continue;
        }
        return Ok(finish(status, *child, outcome, name, spec, port, running));
    }
}

/// A service spawned (with the outcome of its health wait), or the status saying why not.
enum Started {
    NotSpawned(ServiceStatus),
    Spawned(
        ServiceStatus,
        Box<tokio::process::Child>,
        Result<(), String>,
    ),
}

/// Whether a service's log says its port was taken (Go, Python, Node.js, Java, Rust wording).
fn lost_its_port(log: &Path) -> bool {
    let text = std::fs::read(log).unwrap_or_default();
    let text = String::from_utf8_lossy(&text).to_ascii_lowercase();
    ["address already in use", "eaddrinuse", "address in use"]
        .iter()
        .any(|needle| text.contains(needle))
}

/// Books a spawned service in `running` and completes its status.
fn finish(
    mut status: ServiceStatus,
    child: tokio::process::Child,
    outcome: Result<(), String>,
    name: &str,
    spec: &ServiceSpec,
    port: Option<u16>,
    running: &mut Running,
) -> ServiceStatus {
    let fill = |s: &str| match port {
        Some(p) => s.replace("{port}", &p.to_string()),
        None => s.to_string(),
    };
    let health = spec.health.as_deref().map(fill);
    running.children.push((name.to_string(), child));
    match outcome {
        Ok(()) => {
            status.healthy = true;
            let upper = env_name(name);
            if let Some(url) = health.as_deref().and_then(base_url) {
                if !running.env.iter().any(|(k, _)| k == "HUDDLE_SERVICE_URL") {
                    running.env.push(("HUDDLE_SERVICE_URL".into(), url.clone()));
                }
                running
                    .env
                    .push((format!("HUDDLE_SERVICE_{upper}_URL"), url));
            }
            if let Some(p) = port {
                running
                    .env
                    .push((format!("HUDDLE_SERVICE_{upper}_PORT"), p.to_string()));
            }
            running
                .env
                .extend(spec.env.iter().map(|(k, v)| (k.clone(), fill(v))));
        }
        Err(problem) => {
            status.problem = Some(problem);
            status.log_tail = Some(log_tail(&status.log));
        }
    }
    status
}

/// Spawns the service on `port` and waits for it to become healthy (or exit, or time out).
async fn start_on(
    at: &Target<'_>,
    name: &str,
    spec: &ServiceSpec,
    port: Option<u16>,
) -> Result<Started, RunnerError> {
    let (project, log_dir, env) = (at.project, at.log_dir, at.env);
    let fill = |s: &str| match port {
        Some(p) => s.replace("{port}", &p.to_string()),
        None => s.to_string(),
    };
    let argv = shlex::split(&fill(&spec.command))
        .filter(|a| !a.is_empty())
        .ok_or_else(|| {
            RunnerError::Unsupported(format!(
                "[services.{name}] command {:?} is not a valid command line",
                spec.command
            ))
        })?;
    let cwd = match &spec.cwd {
        Some(d) => {
            crate::guard::check_path(d)?;
            project.join(d)
        }
        None => project.to_path_buf(),
    };
    let log = log_dir.join(format!("{name}.log"));
    let file = std::fs::File::create(&log)
        .map_err(|e| RunnerError::io(format!("creating {}", log.display()), e))?;
    let file2 = file
        .try_clone()
        .map_err(|e| RunnerError::io(format!("opening {}", log.display()), e))?;
    let service_env: Vec<(String, String)> =
        spec.env.iter().map(|(k, v)| (k.clone(), fill(v))).collect();
    let mut inv = Invocation::new(&argv[0], &cwd);
    inv.args.extend(argv[1..].iter().map(Into::into));
    if let Some(jail) = at.jail {
        inv = jail.wrap(&inv);
    }
    let mut cmd = tokio::process::Command::new(&inv.program);
    cmd.args(&inv.args)
        .current_dir(&cwd)
        .envs(env.iter().cloned())
        .envs(service_env.iter().cloned())
        .stdin(Stdio::null())
        .stdout(Stdio::from(file))
        .stderr(Stdio::from(file2))
        .kill_on_drop(true);
    if let Some(p) = port {
        cmd.env("PORT", p.to_string());
    }
    #[cfg(unix)]
    cmd.process_group(0);
    let health = spec.health.as_deref().map(fill);
    let check = match (&health, port) {
        (Some(url), _) => format!("GET {url}"),
        (None, Some(p)) => format!("TCP 127.0.0.1:{p}"),
        (None, None) => unreachable!("the project file requires health or port"),
    };
    let mut status = ServiceStatus {
        name: name.to_string(),
        command: argv.clone(),
        healthy: false,
        check,
        log: log.clone(),
        problem: None,
        log_tail: None,
    };
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            status.problem = Some(format!("could not start {:?}: {e}", argv[0]));
            status.log_tail = Some(log_tail(&log));
            return Ok(Started::NotSpawned(status));
        }
    };
    let timeout = spec
        .timeout_secs
        .map_or(DEFAULT_HEALTH_TIMEOUT, Duration::from_secs);
    let interval = spec
        .interval_secs
        .map_or(DEFAULT_HEALTH_INTERVAL, Duration::from_secs)
        .max(Duration::from_millis(100));
    let net = running_net(at);
    let probe = Probe {
        health: health.as_deref(),
        port,
        net: net.as_ref(),
    };
    let outcome = wait_healthy(&mut child, &probe, timeout, interval).await;
    Ok(Started::Spawned(status, Box::new(child), outcome))
}

/// The sandbox's namespace the services of `at` run in.
fn running_net(at: &Target<'_>) -> Option<NetNs> {
    at.jail.and_then(Jail::net).cloned()
}

/// `http://host:port/health` → `http://host:port`.
fn base_url(url: &str) -> Option<String> {
    let after = url.find("://")? + 3;
    let end = url[after..].find('/').map_or(url.len(), |i| after + i);
    Some(url[..end].to_string())
}

fn env_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// A port nothing listens on now.
fn free_port() -> Result<u16, RunnerError> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| RunnerError::io("finding a free port", e))?;
    l.local_addr()
        .map(|a| a.port())
        .map_err(|e| RunnerError::io("finding a free port", e))
}

/// The last lines of a log, secrets scrubbed.
pub fn log_tail(log: &Path) -> String {
    let text = std::fs::read(log).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let text = crate::scrub::strip_ansi(&text);
    let tail = crate::scrub::tail_lines(&text, LOG_TAIL_LINES);
    crate::scrub::scrub(&tail).into_owned()
}

/// A service to start when `huddle.toml` declares none: `npm run start` or `npm run dev`
/// (package.json scripts), or `make run` (a Makefile with a `run:` target), checked on a
/// port huddle picks and passes as `PORT`. `None` when the project has none.
pub fn detect(project: &Path) -> Option<(String, ServiceSpec)> {
    let spec = |command: &str| ServiceSpec {
        command: command.to_string(),
        health: None,
        port: None,
        timeout_secs: None,
        interval_secs: None,
        cwd: None,
        env: BTreeMap::from([("PORT".to_string(), "{port}".to_string())]),
    };
    if let Ok(text) = std::fs::read_to_string(project.join("package.json")) {
        let pkg: serde_json::Value = serde_json::from_str(&text).ok()?;
        for script in ["start", "dev"] {
            if pkg["scripts"][script].is_string() {
                return Some((
                    "app".into(),
                    spec(&format!("npm run {script} -- --port {{port}}")),
                ));
            }
        }
    }
    let makefile = std::fs::read_to_string(project.join("Makefile")).unwrap_or_default();
    if makefile.lines().any(|l| l.starts_with("run:")) {
        return Some(("app".into(), spec("make run PORT={port}")));
    }
    None
}

/// A compose file in the project, which huddle does not start (it runs no container engine).
pub fn compose_file(project: &Path) -> Option<String> {
    [
        "docker-compose.yml",
        "docker-compose.yaml",
        "compose.yml",
        "compose.yaml",
    ]
    .into_iter()
    .find(|f| project.join(f).is_file())
    .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_names_for_the_tests() {
        assert_eq!(
            base_url("http://127.0.0.1:8080/health").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(base_url("http://h:1").as_deref(), Some("http://h:1"));
        assert_eq!(env_name("web-api"), "WEB_API");
    }

    #[test]
    fn detection_finds_npm_scripts_make_targets_and_compose_files() {
        let dir = tempfile::tempdir().unwrap();
        assert!(detect(dir.path()).is_none());
        std::fs::write(
            dir.path().join("Makefile"),
            "build:\n\ttrue\nrun:\n\t./serve\n",
        )
        .unwrap();
        assert_eq!(
            detect(dir.path()).unwrap().1.command,
            "make run PORT={port}"
        );
        std::fs::write(
            dir.path().join("package.json"),
            r#"{"scripts": {"dev": "vite"}}"#,
        )
        .unwrap();
        assert!(detect(dir.path())
            .unwrap()
            .1
            .command
            .starts_with("npm run dev"));
        assert_eq!(compose_file(dir.path()), None);
        std::fs::write(dir.path().join("compose.yaml"), "services: {}\n").unwrap();
        assert_eq!(compose_file(dir.path()).as_deref(), Some("compose.yaml"));
    }
}
