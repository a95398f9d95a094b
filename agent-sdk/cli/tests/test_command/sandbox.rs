//! `huddle test --sandbox` and `huddle worker --sandbox` as real processes: `required` without
//! bubblewrap (simulated by `HUDDLE_BWRAP=/nonexistent`) fails before any test runs, naming
//! why; `auto` then runs the tests without a sandbox and says so; `off` never looks for bwrap.

use crate::common::{fixture, require_pytest};

fn huddle_test(project: &str, mode: &str) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_huddle"))
        .args(["test", "--project", project, "--sandbox", mode])
        .env("HUDDLE_BWRAP", "/nonexistent")
        .env_remove("HUDDLE_TOKEN")
        .env_remove("HUDDLE_TEAM")
        .output()
        .expect("huddle runs")
}

#[test]
fn sandbox_required_without_bubblewrap_fails_before_any_test_runs() {
    require_pytest();
    let project = fixture("pytest");
    let dir = project.path().to_str().unwrap();

    let out = huddle_test(dir, "required");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--sandbox required: bubblewrap (bwrap) is not installed")
            && stderr.contains("/nonexistent"),
        "{stderr}"
    );
    assert!(
        !project.path().join(".huddle/runs").exists(),
        "no run was made"
    );

    let auto = huddle_test(dir, "auto");
    let stderr = String::from_utf8_lossy(&auto.stderr);
    assert_eq!(
        auto.status.code(),
        Some(1),
        "the fixture's failures: {stderr}"
    );
    assert_eq!(
        stderr.matches("tests run without a sandbox").count(),
        1,
        "said once: {stderr}"
    );

    let off = huddle_test(dir, "off");
    let stderr = String::from_utf8_lossy(&off.stderr);
    assert_eq!(off.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("sandbox"), "{stderr}");
}

#[test]
fn a_worker_with_sandbox_required_and_no_bubblewrap_refuses_to_start() {
    let project = fixture("pytest");
    // No daemon listens there: the worker must stop before it ever connects.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_huddle"))
        .args(["--token", "unused", "--url", "http://127.0.0.1:1", "worker"])
        .args(["--role", "tester", "--sandbox", "required", "--project"])
        .arg(project.path())
        .env("HUDDLE_BWRAP", "/nonexistent")
        .env_remove("HUDDLE_TEAM")
        .output()
        .expect("huddle runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--sandbox required: bubblewrap (bwrap) is not installed"),
        "{stderr}"
    );
}

#[test]
fn a_bwrap_that_cannot_create_namespaces_is_refused_by_required() {
    require_pytest();
    let project = fixture("pytest");
    // `false` stands for a bwrap whose namespaces the kernel refuses: the probe fails.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_huddle"))
        .args(["test", "--sandbox", "required", "--project"])
        .arg(project.path())
        .env("HUDDLE_BWRAP", "/bin/false")
        .output()
        .expect("huddle runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--sandbox required: bubblewrap (/bin/false) cannot create namespaces"),
        "{stderr}"
    );
}
