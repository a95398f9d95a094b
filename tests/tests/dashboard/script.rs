//! A dashboard script (`tests/dashboard-e2e/*.mjs`) as a child process speaking the line
//! protocol: it prints `STEP <name>` when the Rust side must act and waits for
//! `DONE <name> [text]`; `PASS` at the end; `# …` lines are progress, echoed here.

use super::browser::{chromium, package_dir, screenshot_dir};
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

pub struct Script {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    pub passed: bool,
}

impl Script {
    /// Starts `node <file>` against the daemon at `url`, signed in to `team` with `token`.
    pub fn start(file: &str, url: &str, team: &str, token: &str, extra: &[(&str, String)]) -> Self {
        let mut cmd = Command::new("node");
        cmd.arg(file)
            .current_dir(package_dir())
            .env("HUDDLE_URL", url)
            .env("HUDDLE_TEAM", team)
            .env("HUDDLE_TOKEN", token)
            .env("HUDDLE_SCREENSHOTS", screenshot_dir())
            .env("HUDDLE_CHROMIUM", chromium())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        for (k, v) in extra {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("start node");
        let stdin = child.stdin.take().expect("stdin");
        let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        Script {
            child,
            stdin,
            lines,
            passed: false,
        }
    }

    /// The next step the script asks for, or None when it has ended.
    pub async fn next_step(&mut self) -> Option<String> {
        while let Some(line) = self.lines.next_line().await.expect("read the script") {
            println!("script: {line}");
            if line == "PASS" {
                self.passed = true;
            } else if let Some(step) = line.strip_prefix("STEP ") {
                return Some(step.to_string());
            }
        }
        None
    }

    pub async fn reply(&mut self, step: &str, text: &str) {
        let line = format!("DONE {step} {text}\n");
        self.stdin
            .write_all(line.as_bytes())
            .await
            .expect("answer the script");
        self.stdin.flush().await.expect("flush");
    }

    /// Waits for the script to exit and fails the test unless it printed PASS.
    pub async fn finish(mut self) {
        let status = self.child.wait().await.expect("node exit");
        assert!(
            status.success() && self.passed,
            "the browser script failed ({status}); see its output above and {}",
            screenshot_dir().join("failure.png").display()
        );
    }
}
