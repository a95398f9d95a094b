//! What the client tests share: the repository's paths, a passing sample project, a team with
//! real `huddle worker` processes, and running a program to the end with a deadline.

use huddle_tests::cli::{Huddle, Running};
use huddle_tests::TestDaemon;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// Runs `cmd` to the end (at most `secs` seconds), failing the test with its output when it
/// fails; returns what it printed.
pub async fn run_ok(mut cmd: tokio::process::Command, what: &str, secs: u64) -> Output {
    cmd.kill_on_drop(true).stdin(std::process::Stdio::null());
    let out = tokio::time::timeout(Duration::from_secs(secs), cmd.output())
        .await
        .unwrap_or_else(|_| panic!("{what} ran past {secs} s"))
        .unwrap_or_else(|e| panic!("{what} could not start: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A small pytest project whose whole suite passes, in its own temporary directory.
pub fn passing_project() -> tempfile::TempDir {
    project("def add(a, b):\n    return a + b\n")
}

/// The same project with a bug: one of its two tests fails.
pub fn failing_project() -> tempfile::TempDir {
    project("def add(a, b):\n    return abs(a) + b\n")
}

fn project(calc: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = [
        ("pytest.ini", "[pytest]\n"),
        ("calc.py", calc),
        ("tests/__init__.py", ""),
        (
            "tests/test_calc.py",
            "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_add_negative():\n    assert add(-2, 1) == -1\n",
        ),
    ];
    for (rel, text) in files {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    dir
}

/// A daemon with team `qa`: a coordinator's token, and a tester and an executor running as
/// real `huddle worker --project` processes on `project`, without a model.
pub struct WorkingTeam {
    pub daemon: TestDaemon,
    pub coordinator_token: String,
    _workers: Vec<Running>,
}

pub async fn working_team(project: &Path) -> WorkingTeam {
    let daemon = TestDaemon::start().await;
    let coord = daemon.team("qa").await;
    let mut workers = Vec::new();
    for role in ["tester", "executor"] {
        let api = daemon.agent("qa", role, role).await;
        let h = Huddle::new(&daemon.url, &api.token, "qa");
        let dir = project.to_str().expect("utf-8 path");
        let mut cmd = h.command(&["worker", "--role", role, "--wait", "1s", "--project", dir]);
        // No model, whatever the environment says: a failing test stays failing.
        for key in [
            "HUDDLE_LLM_BASE_URL",
            "HUDDLE_LLM_MODEL",
            "HUDDLE_LLM_API_KEY",
            "HUDDLE_CONFIG",
        ] {
            cmd.env_remove(key);
        }
        workers.push(Running::start(cmd));
    }
    WorkingTeam {
        coordinator_token: coord.token.clone(),
        daemon,
        _workers: workers,
    }
}

/// The body of the first fenced block of `lang` after `marker` in `doc`.
pub fn code_block(doc: &str, marker: &str, lang: &str) -> String {
    let after = doc
        .split_once(marker)
        .unwrap_or_else(|| panic!("the guide has no {marker:?}"))
        .1;
    let fence = format!("```{lang}\n");
    let start = after.find(&fence).expect("a fenced block after the marker") + fence.len();
    let len = after[start..].find("```").expect("the block ends");
    after[start..start + len].to_string()
}

/// A new ES-module project `dir/app` with the client installed the way its README says:
/// `npm install --install-links` naming the package's folder (here a copy of it), which copies
/// the package with its committed `dist/` and installs its dependency (from npm's cache, which
/// scripts/install-test-deps fills). Returns the project's folder.
pub async fn install_client(dir: &Path) -> PathBuf {
    let client = copy_package(dir);
    let app = dir.join("app");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::write(
        app.join("package.json"),
        r#"{"name": "app", "private": true, "type": "module"}"#,
    )
    .unwrap();
    let mut install = tokio::process::Command::new("npm");
    install
        .args([
            "install",
            "--install-links",
            "--offline",
            "--no-audit",
            "--no-fund",
        ])
        .arg(&client)
        .current_dir(&app);
    run_ok(
        install,
        "npm install --install-links of the client's folder",
        300,
    )
    .await;
    app
}

/// A copy of `clients/typescript` under `dir` (sources, compiled `dist/`, configs, lockfile)
/// that uses the repository's installed `node_modules`, so builds in it leave nothing in the
/// repository and tests running at once do not share output directories. Fails the test, naming the fix, when
/// the packages are not installed.
pub fn copy_package(dir: &Path) -> PathBuf {
    let from = repo().join("clients/typescript");
    let modules = from.join("node_modules");
    assert!(
        modules.join("typescript").is_dir() && modules.join("eventsource-parser").is_dir(),
        "clients/typescript/node_modules is missing: run scripts/install-test-deps (npm ci)"
    );
    let to = dir.join("huddle-client");
    for rel in [
        "package.json",
        "package-lock.json",
        "tsconfig.json",
        "tsconfig.test.json",
    ] {
        std::fs::create_dir_all(&to).unwrap();
        std::fs::copy(from.join(rel), to.join(rel)).unwrap();
    }
    for sub in ["src", "test", "dist"] {
        std::fs::create_dir_all(to.join(sub)).unwrap();
        for entry in std::fs::read_dir(from.join(sub)).unwrap().flatten() {
            std::fs::copy(entry.path(), to.join(sub).join(entry.file_name())).unwrap();
        }
    }
    std::os::unix::fs::symlink(&modules, to.join("node_modules")).unwrap();
    to
}
