//! `clients/python`: installed from its folder with pip into a fresh virtual environment, its
//! own test suite passes against real daemons (the suite starts `huddled` itself).

use crate::support::{repo, run_ok};
use huddle_tests::process::huddled_binary;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_client_installs_from_its_folder_and_passes_its_tests() {
    // The package's dependencies and its build backend come from scripts/install-test-deps;
    // the install below then needs no network.
    huddle_tests::python::require_modules(&["pytest", "httpx", "httpx_sse", "setuptools", "wheel"]);
    let dir = tempfile::tempdir().unwrap();
    // A copy, so building the package leaves nothing in the repository.
    let package = dir.path().join("python");
    copy_dir(&repo().join("clients/python"), &package);
    let venv = dir.path().join("venv");
    let mut make = tokio::process::Command::new("python3");
    make.args(["-m", "venv", "--system-site-packages"])
        .arg(&venv);
    run_ok(make, "python3 -m venv", 120).await;
    let python = venv.join("bin/python");
    let mut install = tokio::process::Command::new(&python);
    install
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
        ])
        .arg(&package);
    run_ok(install, "pip install ./clients/python", 300).await;

    let mut pytest = tokio::process::Command::new(&python);
    pytest
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(package.join("tests"))
        // The installed package, not the copy's sources, must be what the tests import.
        .current_dir(dir.path())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("HUDDLED", huddled_binary().expect("huddled is built"));
    let out = run_ok(pytest, "the Python client's tests", 600).await;
    let text = String::from_utf8_lossy(&out.stdout);
    let summary = text.lines().last().unwrap_or_default();
    assert!(
        summary.contains(" passed") && !summary.contains("failed") && !summary.contains("skipped"),
        "every test ran and passed: {summary}"
    );
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let name = entry.file_name();
        if name == "__pycache__" || name.to_string_lossy().ends_with(".egg-info") || name == "build"
        {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            copy_dir(&path, &to.join(&name));
        } else {
            std::fs::copy(&path, to.join(&name)).unwrap();
        }
    }
}
