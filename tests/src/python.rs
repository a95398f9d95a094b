//! Python scripts the tests drive (the official MCP SDK, Prometheus's text parser): the
//! interpreter and its modules must be there — a missing one fails the test, naming the fix.

use std::path::Path;
use std::process::Output;

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

/// Runs `python3 script` with `env`, fails the test with its stderr when it fails, and returns
/// its output.
pub async fn run(script: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = tokio::process::Command::new("python3");
    cmd.arg(script).kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let output = tokio::time::timeout(std::time::Duration::from_secs(120), cmd.output())
        .await
        .unwrap_or_else(|_| panic!("{} ran past two minutes", script.display()))
        .expect("starting python3");
    assert!(
        output.status.success(),
        "{} failed:\n{}",
        script.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}
