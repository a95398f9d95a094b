//! A missing runner is a clear error naming the tool and how to install it — never a report
//! of "0 tests, passed". Programs are looked up on the run's own PATH, so an empty PATH makes
//! every tool missing without touching this process's environment.

use crate::common::*;
use huddle_runners::{run_tests, Framework, RunOptions, RunnerError};

fn empty_path() -> RunOptions {
    RunOptions {
        env: vec![("PATH".into(), "/nonexistent-huddle-path".into())],
        ..opts()
    }
}

async fn missing_tool(fixture_name: &str, fw: Framework, opts: &RunOptions) -> (String, String) {
    let project = fixture(fixture_name);
    let err = run_tests(project.path(), fw, opts)
        .await
        .expect_err("the run must fail");
    assert_eq!(err.exit_code(), 127, "{err}");
    let runs = project.path().join(".huddle/runs");
    let run_dirs = runs
        .read_dir()
        .map_or(0, |d| d.flatten().filter(|e| e.path().is_dir()).count());
    assert!(
        run_dirs == 0,
        "a run that never started leaves no run directory"
    );
    match err {
        RunnerError::MissingTool { tool, hint } => (tool, hint),
        other => panic!("expected a missing tool, got {other}"),
    }
}

#[tokio::test]
async fn no_python_names_python_and_pytest() {
    let (tool, hint) = missing_tool("pytest", Framework::Pytest, &empty_path()).await;
    assert_eq!(tool, "python3");
    assert!(hint.contains("pip install pytest"), "{hint}");
}

#[tokio::test]
async fn python_without_pytest_names_pytest() {
    require_tool("python3");
    let venv = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(venv.path())
        .status()
        .expect("python3 -m venv");
    assert!(status.success(), "creating a bare virtualenv");
    let opts = RunOptions {
        env: vec![("PATH".into(), venv.path().join("bin").display().to_string())],
        ..opts()
    };
    let (tool, hint) = missing_tool("pytest", Framework::Pytest, &opts).await;
    assert_eq!(tool, "pytest");
    assert!(hint.contains("pip install pytest"), "{hint}");
}

#[tokio::test]
async fn no_node_names_node_and_npx() {
    for (name, fw) in [
        ("jest", Framework::Jest),
        ("vitest", Framework::Vitest),
        ("mocha", Framework::Mocha),
    ] {
        let (tool, hint) = missing_tool(name, fw, &empty_path()).await;
        assert_eq!(tool, "node/npx", "{name}");
        assert!(
            hint.contains("Node.js") && hint.contains("npm ci"),
            "{hint}"
        );
    }
}

#[tokio::test]
async fn uninstalled_node_packages_name_the_package_and_npm_ci() {
    require_tool("node");
    for (name, fw) in [
        ("jest", Framework::Jest),
        ("vitest", Framework::Vitest),
        ("mocha", Framework::Mocha),
    ] {
        let project = fixture(name);
        std::fs::remove_file(project.path().join("node_modules")).expect("unlink node_modules");
        let err = run_tests(project.path(), fw, &opts())
            .await
            .expect_err("must fail");
        let RunnerError::MissingTool { tool, hint } = &err else {
            panic!("{err}")
        };
        assert_eq!(tool, name);
        assert!(hint.contains("npm ci"), "{hint}");
        assert_eq!(err.exit_code(), 127);
    }
}

#[tokio::test]
async fn no_go_names_go() {
    let (tool, hint) = missing_tool("go", Framework::Go, &empty_path()).await;
    assert_eq!(tool, "go");
    assert!(hint.contains("golang-go"), "{hint}");
}

#[tokio::test]
async fn no_cargo_names_cargo() {
    let (tool, hint) = missing_tool("cargo", Framework::Cargo, &empty_path()).await;
    assert_eq!(tool, "cargo");
    assert!(hint.contains("rustup"), "{hint}");
}
