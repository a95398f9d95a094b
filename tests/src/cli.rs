//! Runs the real `huddle` binary. It lives in the `huddle-cli` package, so Cargo does not build
//! it for this package's tests; the first use builds it (a no-op when fresh) and asks Cargo
//! where it is.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::OnceLock;

/// The path of the `huddle` binary, built on first use unless the one beside the tests is
/// newer than every source it is built from (as after `cargo build --workspace --all-targets`).
pub fn huddle_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| fresh_binary().unwrap_or_else(build))
}

/// `target/<profile>/huddle` when it is newer than `agent-sdk/` and `Cargo.lock`.
fn fresh_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?.parent()?.join("huddle");
    let built = std::fs::metadata(&bin).ok()?.modified().ok()?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    let mut sources = vec![root.join("Cargo.lock"), root.join("Cargo.toml")];
    let mut dirs = vec![root.join("agent-sdk")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).ok()?.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                sources.push(path);
            }
        }
    }
    let newest = sources
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok()?.modified().ok())
        .max()?;
    (built >= newest).then_some(bin)
}

fn build() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    // Build with the profile these tests were built with: target/<profile>/deps/<test>.
    let exe = std::env::current_exe().expect("test executable path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name);
    let profile = match profile_dir.and_then(|p| p.to_str()) {
        Some("debug") | None => "dev".to_string(),
        Some(other) => other.to_string(),
    };
    let mut cmd = std::process::Command::new(cargo);
    cmd.args([
        "build",
        "--quiet",
        "-p",
        "huddle-cli",
        "--bin",
        "huddle",
        "--message-format=json",
    ])
    .args(["--profile", &profile])
    .current_dir(env!("CARGO_MANIFEST_DIR"))
    .stderr(Stdio::inherit());
    // Cargo runs tests with variables describing this package (CARGO_MANIFEST_DIR…); build
    // scripts that watch them would see a change and rebuild, slowing every later build.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        let per_package = [
            "CARGO_MANIFEST_",
            "CARGO_PKG_",
            "CARGO_CRATE_",
            "CARGO_BIN_",
            "CARGO_PRIMARY_",
            "CARGO_TARGET_TMPDIR",
            "CARGO_RUSTC_CURRENT_DIR",
        ];
        if per_package.iter().any(|p| key.starts_with(p)) {
            cmd.env_remove(&key);
        }
    }
    let out = cmd.output().expect("cargo build runs");
    assert!(out.status.success(), "building the huddle binary failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "huddle")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .expect("cargo reported the huddle executable")
}

/// `huddle` with a URL, token and team in its environment (and nothing else of ours).
#[derive(Clone)]
pub struct Huddle {
    pub url: String,
    pub token: String,
    pub team: String,
}

impl Huddle {
    pub fn new(url: &str, token: &str, team: &str) -> Huddle {
        Huddle {
            url: url.into(),
            token: token.into(),
            team: team.into(),
        }
    }

    /// A command ready to spawn, configured through the environment.
    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(huddle_bin());
        cmd.args(args)
            .env_remove("HUDDLE_LOG")
            .env("HUDDLE_URL", &self.url)
            .env("HUDDLE_TOKEN", &self.token)
            .env("HUDDLE_TEAM", &self.team)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .kill_on_drop(true);
        cmd
    }

    /// Runs to the end and returns what it printed.
    pub async fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().await.expect("huddle runs")
    }

    /// Runs, asserts success, and returns stdout.
    pub async fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args).await;
        assert!(
            out.status.success(),
            "huddle {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8 output")
    }

    /// Runs with `--json`, asserts success, and parses stdout.
    pub async fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.ok(&all).await;
        serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("huddle {args:?} printed no JSON ({e}): {out}"))
    }

    /// Runs, asserts failure, and returns (exit code, stderr).
    pub async fn fails(&self, args: &[&str]) -> (i32, String) {
        let out = self.run(args).await;
        assert!(
            !out.status.success(),
            "huddle {args:?} should fail but printed {}",
            String::from_utf8_lossy(&out.stdout)
        );
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8(out.stderr).expect("utf-8 stderr"),
        )
    }
}

/// A `huddle` process left running, with its output readable line by line.
pub struct Running {
    pub child: tokio::process::Child,
    pub stdout: Lines,
    pub stderr: Lines,
}

impl Huddle {
    /// Starts `huddle args...` with stdout and stderr piped.
    pub fn spawn(&self, args: &[&str]) -> Running {
        Running::start(self.command(args))
    }
}

impl Running {
    /// Starts `cmd` with stdout and stderr piped.
    pub fn start(mut cmd: tokio::process::Command) -> Running {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("huddle starts");
        let stdout = Lines::read(child.stdout.take().expect("stdout"));
        let stderr = Lines::read(child.stderr.take().expect("stderr"));
        Running {
            child,
            stdout,
            stderr,
        }
    }

    /// Sends a signal to the process.
    pub fn signal(&self, signal: nix::sys::signal::Signal) {
        let pid = self.child.id().expect("still running") as i32;
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal).expect("signal sent");
    }

    /// Waits (up to 60 s) for the process to exit and returns its exit code.
    pub async fn exit_code(&mut self) -> i32 {
        let status = tokio::time::timeout(std::time::Duration::from_secs(60), self.child.wait())
            .await
            .expect("huddle exited within 60 s")
            .expect("wait");
        status.code().unwrap_or(-1)
    }
}

/// The lines a pipe produced, as they come.
pub struct Lines {
    rx: tokio::sync::mpsc::UnboundedReceiver<String>,
    /// Every line read so far, for failure messages.
    pub seen: Vec<String>,
}

impl Lines {
    fn read(pipe: impl tokio::io::AsyncRead + Unpin + Send + 'static) -> Lines {
        use tokio::io::AsyncBufReadExt;
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(pipe).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Lines {
            rx,
            seen: Vec::new(),
        }
    }

    /// The next line; `None` at the end. Fails the test after 60 s without one.
    pub async fn next(&mut self) -> Option<String> {
        let line = tokio::time::timeout(std::time::Duration::from_secs(60), self.rx.recv())
            .await
            .unwrap_or_else(|_| panic!("no output line within 60 s; so far: {:#?}", self.seen));
        if let Some(l) = &line {
            self.seen.push(l.clone());
        }
        line
    }

    /// Reads until a line containing `needle` and returns it.
    pub async fn wait_for(&mut self, needle: &str) -> String {
        loop {
            match self.next().await {
                Some(line) if line.contains(needle) => return line,
                Some(_) => continue,
                None => panic!("output ended without {needle:?}: {:#?}", self.seen),
            }
        }
    }

    /// The next line parsed as JSON.
    pub async fn next_json(&mut self) -> Value {
        let line = self.next().await.expect("a line");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }
}
