//! Python scripts the tests drive (the official MCP SDK, Prometheus's text parser): the
//! interpreter and its modules must be there — a missing one fails the test, naming the fix.

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::Duration;

/// Fails the test unless `python3` can import every module of `modules`.
#[track_caller]
pub fn require_modules(modules: &[&str]) {
    let imports = modules.join(", ");
    let ok = std::process::Command::new("python3")
        .args(["-c", &format!("import {imports}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "python3 with {imports} is required by this test: run scripts/install-test-deps (pip)"
    );
}

/// How long a script may run: longer than the deadlines the scripts keep themselves (`leases.py`
/// allows two minutes for setting up its waits alone, on a loaded machine), so that a slow run
/// fails with the script's own report rather than here; shorter than nextest's `ci` profile
/// (ten minutes), so this message, not a kill, is what a hung script leaves.
const SCRIPT_DEADLINE: Duration = Duration::from_secs(420);

/// Runs `python3 script` with `env`, fails the test with its stderr when it fails or runs past
/// `SCRIPT_DEADLINE` (then with what it had written), and returns its output.
pub async fn run(script: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = tokio::process::Command::new("python3");
    cmd.arg(script)
        .kill_on_drop(true)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("starting python3");
    let stdout = read_to_end(child.stdout.take());
    let stderr = read_to_end(child.stderr.take());
    let status = match tokio::time::timeout(SCRIPT_DEADLINE, child.wait()).await {
        Ok(status) => status.expect("waiting for python3"),
        Err(_) => {
            let _ = child.kill().await;
            // Killed, the script closes its pipes; a little grace in case a child keeps one.
            let written = tokio::time::timeout(Duration::from_secs(10), stderr)
                .await
                .map_or_else(|_| "(its stderr stayed open)".into(), lossy);
            panic!(
                "{} ran past {} s; its stderr so far:\n{written}",
                script.display(),
                SCRIPT_DEADLINE.as_secs()
            );
        }
    };
    let output = Output {
        status,
        stdout: stdout.await.unwrap_or_default(),
        stderr: stderr.await.unwrap_or_default(),
    };
    assert!(
        output.status.success(),
        "{} failed:\n{}",
        script.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Reads a child's pipe to its end on a task of its own, so neither pipe fills while the other
/// is read.
fn read_to_end<R>(pipe: Option<R>) -> tokio::task::JoinHandle<Vec<u8>>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = tokio::io::AsyncReadExt::read_to_end(&mut pipe, &mut bytes).await;
        }
        bytes
    })
}

fn lossy(joined: Result<Vec<u8>, tokio::task::JoinError>) -> String {
    String::from_utf8_lossy(&joined.unwrap_or_default()).into_owned()
}
