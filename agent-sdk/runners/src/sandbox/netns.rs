//! One network namespace for a tier's services and its tests: a "holder" — `bwrap
//! --unshare-user --unshare-net … sh -c 'echo $$; exec cat'` — owns it for as long as the
//! services run, and every service and test command enters it with `nsenter --target <holder>
//! --user --net --preserve-credentials` before its own bwrap builds its file-system view. The
//! holder's user namespace belongs to huddle's user, which may enter it (and then its network
//! namespace) without privileges. The services listen on that namespace's 127.0.0.1, which
//! huddle itself cannot reach, so their health is checked from the inside:
//! [`NetNs::listening`] reads the namespace's socket table (`/proc/<holder>/net/tcp`), and
//! [`NetNs::http_ok`] runs an HTTP/1.0 GET through bash's `/dev/tcp` in the namespace.

use crate::error::RunnerError;
use crate::process::Invocation;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};

/// How long the holder may take to come up.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// A network namespace held open; clones share it, and it goes when the last one is dropped.
#[derive(Debug, Clone)]
pub struct NetNs(Arc<Holder>);

#[derive(Debug)]
struct Holder {
    /// The holder's process in the namespace (host PID), which `nsenter` targets.
    pid: u32,
    nsenter: PathBuf,
    /// bwrap's process: killed on drop; its stdin is a pipe, so it also ends with huddle.
    _child: tokio::process::Child,
}

impl PartialEq for NetNs {
    fn eq(&self, other: &Self) -> bool {
        self.0.pid == other.0.pid
    }
}

impl NetNs {
    /// Creates the namespace (with only loopback, up) and waits until it is ready.
    pub async fn create(bwrap: &Path) -> Result<NetNs, RunnerError> {
        let fail = |why: String| RunnerError::Sandbox(format!("the services' sandbox: {why}"));
        let nsenter = super::probe::on_path("nsenter")
            .ok_or_else(|| fail("nsenter (util-linux) is not on PATH".into()))?;
        let mut cmd = tokio::process::Command::new(bwrap);
        cmd.args(["--ro-bind", "/", "/", "--unshare-user", "--unshare-net"])
            .args(["--die-with-parent", "--"])
            // Its PID (the host's: the holder has no PID namespace), once the namespaces are
            // set up; then it waits for huddle to go (end of stdin) or to kill it.
            .args(["sh", "-c", "echo $$ && exec cat"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd
            .spawn()
            .map_err(|e| fail(format!("starting {}: {e}", bwrap.display())))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let read = async {
            let mut lines = BufReader::new(stdout).lines();
            let line = lines.next_line().await.ok().flatten()?;
            line.trim().parse::<u32>().ok()
        };
        let pid = match tokio::time::timeout(START_TIMEOUT, read).await {
            Ok(Some(pid)) => pid,
            _ => {
                let _ = child.start_kill();
                let out = child.wait_with_output().await;
                let err = out.map(|o| o.stderr).unwrap_or_default();
                return Err(fail(format!(
                    "the namespace holder did not start: {}",
                    String::from_utf8_lossy(&err).trim()
                )));
            }
        };
        Ok(NetNs(Arc::new(Holder {
            pid,
            nsenter,
            _child: child,
        })))
    }

    /// The holder's PID.
    pub fn pid(&self) -> u32 {
        self.0.pid
    }

    /// `nsenter` into this namespace (user, then network), to be followed by the command.
    pub(crate) fn enter_command(&self) -> Invocation {
        let mut inv = Invocation::new(&self.0.nsenter, "/");
        inv.arg("--target").arg(self.0.pid.to_string());
        inv.arg("--user").arg("--net").arg("--preserve-credentials");
        inv.arg("--");
        inv
    }

    /// Whether something listens on TCP `port` in the namespace (IPv4 or IPv6).
    pub fn listening(&self, port: u16) -> bool {
        let want = format!(":{port:04X}");
        ["tcp", "tcp6"].iter().any(|t| {
            let table = std::fs::read_to_string(format!("/proc/{}/net/{t}", self.0.pid));
            table.unwrap_or_default().lines().skip(1).any(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                // local_address is field 1, the state field 3 (0A: LISTEN).
                f.len() > 3 && f[1].ends_with(&want) && f[3] == "0A"
            })
        })
    }

    /// A GET of `url` (`http://host:port/path`) from inside the namespace, by bash's
    /// `/dev/tcp`; `Ok` on a 2xx or 3xx answer. Without bash, only whether the port listens.
    pub async fn http_ok(&self, url: &str, timeout: Duration) -> Result<(), String> {
        let (host, port, path) = split_url(url).ok_or_else(|| format!("GET {url}: not http"))?;
        let Some(bash) = super::probe::on_path("bash") else {
            return if self.listening(port) {
                Ok(())
            } else {
                Err(format!(
                    "nothing listens on port {port} (no bash for GET {url})"
                ))
            };
        };
        const GET: &str = r#"exec 3<>"/dev/tcp/$1/$2" || exit 7
printf 'GET %s HTTP/1.0\r\nHost: %s:%s\r\nConnection: close\r\n\r\n' "$3" "$1" "$2" >&3
IFS= read -r line <&3; printf '%s\n' "$line""#;
        let mut inv = self.enter_command();
        inv.arg(bash).arg("-c").arg(GET).arg("huddle-health");
        inv.arg(host).arg(port.to_string()).arg(path);
        let out = tokio::process::Command::new(&inv.program)
            .args(&inv.args)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .output();
        let out = tokio::time::timeout(timeout, out)
            .await
            .map_err(|_| format!("GET {url}: no answer in {}s", timeout.as_secs()))?
            .map_err(|e| format!("GET {url}: {e}"))?;
        let line = String::from_utf8_lossy(&out.stdout);
        let code = line.split_whitespace().nth(1).unwrap_or("");
        match code.chars().next() {
            Some('2' | '3') => Ok(()),
            _ if code.is_empty() => Err(format!("GET {url}: connection refused or no answer")),
            _ => Err(format!("GET {url} answered {code}")),
        }
    }
}

/// `http://host:port/path` → (host, port, path); port 80 when missing.
fn split_url(url: &str) -> Option<(String, u16, String)> {
    let rest = url.strip_prefix("http://")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (h, p.parse().ok()?),
        None => (authority, 80),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Some((host.to_string(), port, path.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_host_port_and_path() {
        assert_eq!(
            split_url("http://127.0.0.1:8080/health?x=1"),
            Some(("127.0.0.1".into(), 8080, "/health?x=1".into()))
        );
        assert_eq!(
            split_url("http://localhost"),
            Some(("localhost".into(), 80, "/".into()))
        );
        assert_eq!(split_url("https://x:1/"), None);
    }
}
