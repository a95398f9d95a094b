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

/// A cargo project whose dependency cargo has downloaded but not unpacked (a registry's
/// `.crate`, as after cargo's cleaning of unpacked sources) runs in the sandbox, where
/// `CARGO_HOME` is read-only: huddle has cargo unpack it first, outside (`cargo_sources.rs`).
/// The dependency comes from a local registry in a private `CARGO_HOME`, so nothing here
/// touches the machine's own.
#[test]
fn a_dependency_downloaded_but_not_unpacked_is_unpacked_before_a_sandboxed_cargo_run() {
    require_cargo_and_bwrap();
    crate::common::require_tool("tar");
    crate::common::require_tool("sha256sum");
    let home = tempfile::tempdir().unwrap();
    let cargo_home = home.path().join("cargo-home");
    // Inside CARGO_HOME, which the sandbox shows (read-only); the rest of /tmp it hides.
    let registry = cargo_home.join("local-registry");
    local_registry_with_tiny(&registry);
    std::fs::create_dir_all(&cargo_home).unwrap();
    std::fs::write(
        cargo_home.join("config.toml"),
        format!(
            "[source.crates-io]\nreplace-with = \"local\"\n\n[source.local]\nlocal-registry = \"{}\"\n",
            registry.display()
        ),
    )
    .unwrap();

    let project = cargo_project(
        "uses-tiny",
        "tiny = \"0.1\"",
        "pub fn quadruple(x: u32) -> u32 { tiny::double(tiny::double(x)) }\n\n\
         #[test]\nfn four_times() { assert_eq!(quadruple(3), 12); }\n",
    );
    let p = project.path();
    let cargo = |args: &[&str]| {
        std::process::Command::new("cargo")
            .args(args)
            .current_dir(p)
            .env("CARGO_HOME", &cargo_home)
            .output()
            .expect("cargo runs")
    };
    let locked = cargo(&["generate-lockfile", "--offline"]);
    assert!(
        locked.status.success(),
        "{}",
        String::from_utf8_lossy(&locked.stderr)
    );
    let unpacked = || {
        std::fs::read_dir(cargo_home.join("registry/src"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|index| index.path().join("tiny-0.1.0/src/lib.rs").is_file())
    };
    assert!(!unpacked(), "resolving the lockfile unpacks nothing");

    let out = huddle_test_in_sandbox(p, &["--json"])
        .env("CARGO_HOME", &cargo_home)
        .output()
        .expect("huddle runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("--json prints JSON");
    assert_eq!(report["summary"]["passed"], 1, "{stdout}");
    assert_eq!(report["summary"]["error"], 0, "{stdout}");
    assert!(
        unpacked(),
        "tiny 0.1.0 is unpacked in the private CARGO_HOME"
    );
}

/// A local registry (cargo's `local-registry` source) holding one crate, `tiny` 0.1.0.
fn local_registry_with_tiny(registry: &std::path::Path) {
    let sources = registry.join("sources/tiny-0.1.0");
    std::fs::create_dir_all(sources.join("src")).unwrap();
    std::fs::write(
        sources.join("Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(
        sources.join("src/lib.rs"),
        "pub fn double(x: u32) -> u32 { x * 2 }\n",
    )
    .unwrap();
    let crate_file = registry.join("tiny-0.1.0.crate");
    let tar = std::process::Command::new("tar")
        .arg("-czf")
        .arg(&crate_file)
        .arg("-C")
        .arg(registry.join("sources"))
        .arg("tiny-0.1.0")
        .status()
        .expect("tar runs");
    assert!(tar.success());
    let sum = std::process::Command::new("sha256sum")
        .arg(&crate_file)
        .output()
        .expect("sha256sum runs");
    let sum = String::from_utf8_lossy(&sum.stdout);
    let cksum = sum.split_whitespace().next().expect("a checksum");
    let index = registry.join("index/ti/ny");
    std::fs::create_dir_all(&index).unwrap();
    let entry = serde_json::json!({
        "name": "tiny", "vers": "0.1.0", "deps": [], "cksum": cksum,
        "features": {}, "yanked": false,
    });
    std::fs::write(index.join("tiny"), format!("{entry}\n")).unwrap();
    std::fs::remove_dir_all(registry.join("sources")).unwrap();
}

/// Nothing a cargo project configures or builds runs outside the sandbox: its
/// `.cargo/config.toml` names a `rustc-wrapper` that writes where only a process outside the
/// sandbox can (the sandbox's `/tmp` is its own). It ran outside twice before: in nextest's
/// listing (a spawned task had left the run's sandbox scope) and, had it run from the project's
/// directory, in the `cargo fetch --offline` that unpacks dependencies. The wrapper says where
/// it ran (`/proc/1/comm` is `bwrap` inside) and what for.
#[test]
fn a_projects_cargo_config_never_runs_outside_the_sandbox() {
    require_cargo_and_bwrap();
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("ran-outside-the-sandbox");
    let project = cargo_project("wrapped", "", "#[test]\nfn it_builds() {}\n");
    let p = project.path();
    std::fs::create_dir_all(p.join(".cargo")).unwrap();
    let wrapper = p.join("wrap.sh");
    script(
        &wrapper,
        &format!(
            "echo \"$(cat /proc/1/comm) $PWD $*\" >> '{}' 2>/dev/null\nexec \"$@\"",
            marker.display()
        ),
    );
    std::fs::write(
        p.join(".cargo/config.toml"),
        format!("[build]\nrustc-wrapper = \"{}\"\n", wrapper.display()),
    )
    .unwrap();
    let out = huddle_test_in_sandbox(p, &[])
        .output()
        .expect("huddle runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        !marker.exists(),
        "the project's rustc-wrapper ran outside the sandbox: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
}

/// `--affected` reads a cargo project's crate graph outside the sandbox, and rustup takes a
/// `rust-toolchain.toml` from the working directory: one naming a toolchain directory of the
/// project's own must never have its `cargo` run there. (`RUSTUP_TOOLCHAIN`, which cargo sets
/// for the tests it runs and which outranks the file, is removed, as a user's shell has none.)
#[test]
fn affected_never_runs_a_toolchain_the_project_names_outside_the_sandbox() {
    require_cargo_and_bwrap();
    crate::common::require_tool("git");
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("ran-outside-the-sandbox");
    let project = cargo_project("pinned", "", "#[test]\nfn it_builds() {}\n");
    let p = project.path();
    std::fs::create_dir_all(p.join("toolchain/bin")).unwrap();
    for tool in ["cargo", "rustc"] {
        let echo = format!("echo \"{tool} $*\" >> '{}'", marker.display());
        script(&p.join("toolchain/bin").join(tool), &echo);
    }
    std::fs::write(
        p.join("rust-toolchain.toml"),
        format!(
            "[toolchain]\npath = \"{}\"\n",
            p.join("toolchain").display()
        ),
    )
    .unwrap();
    // Committed, so the change below is a source file's and the crate graph is read.
    crate::common::git(p, &["init", "-q"]);
    crate::common::git(p, &["add", "-A"]);
    crate::common::git(p, &["commit", "-q", "-m", "start"]);
    std::fs::write(p.join("src/lib.rs"), "#[test]\nfn it_still_builds() {}\n").unwrap();
    let out = huddle_test_in_sandbox(p, &["--affected"])
        .env_remove("RUSTUP_TOOLCHAIN")
        .output()
        .expect("huddle runs");
    assert!(
        !marker.exists(),
        "the project's toolchain ran outside the sandbox: {}\n{}",
        std::fs::read_to_string(&marker).unwrap_or_default(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `huddle test --project p --sandbox required` and `extra`, as a process with no daemon.
fn huddle_test_in_sandbox(p: &std::path::Path, extra: &[&str]) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_huddle"));
    cmd.arg("test")
        .arg("--project")
        .arg(p)
        .args(["--sandbox", "required"])
        .args(extra)
        .env_remove("HUDDLE_TOKEN")
        .env_remove("HUDDLE_TEAM");
    cmd
}

/// Fails loudly unless cargo and a working bubblewrap are here.
fn require_cargo_and_bwrap() {
    crate::common::require_tool("cargo");
    if let Err(why) = huddle_runners::sandbox::probe() {
        panic!("bubblewrap is required by this test: {why}");
    }
}

/// A cargo package `name` (its own workspace) in a temporary directory, with `dependencies`
/// (lines of its `[dependencies]`) and `lib` as `src/lib.rs`.
fn cargo_project(name: &str, dependencies: &str, lib: &str) -> tempfile::TempDir {
    let project = tempfile::tempdir().unwrap();
    let p = project.path();
    std::fs::create_dir_all(p.join("src")).unwrap();
    std::fs::write(
        p.join("Cargo.toml"),
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
             [workspace]\n\n[dependencies]\n{dependencies}\n"
        ),
    )
    .unwrap();
    std::fs::write(p.join("src/lib.rs"), lib).unwrap();
    project
}

/// An executable shell script at `path` running `body`.
fn script(path: &std::path::Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}
