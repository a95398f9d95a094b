//! Runs in the bubblewrap sandbox (`--sandbox required`) against the same runs without it
//! (`off`): real bwrap, real pytest and jest. A test writing outside the workspace fails only
//! in the sandbox; the home is empty there; a server huddle's own process listens on is out of
//! reach; the workspace, its runs and /tmp stay writable; a tier's service on the sandbox's
//! loopback still answers its tests. A missing bwrap fails here (as in CI), never skips.

use crate::common::*;
use huddle_runners::tiers::pipeline::{run_tiers, TiersOptions};
use huddle_runners::tiers::Tier;
use huddle_runners::{run_tests, Framework, Outcome, Report, RunOptions, Sandbox};
use std::collections::BTreeMap;
use std::path::Path;

/// Fails loudly unless bwrap is installed and works.
fn require_bwrap() {
    if let Err(why) = huddle_runners::sandbox::probe() {
        panic!("{why}: run scripts/install-test-deps (apt-get install bubblewrap)");
    }
}

const TESTS: &str = r#"
import os, pathlib, socket

def test_writes_in_the_workspace():
    pathlib.Path("made-by-the-test.txt").write_text("ok")

def test_writes_in_tmp():
    scratch = pathlib.Path("/tmp", f"huddle-sandbox-{os.getpid()}")
    scratch.write_text("ok")
    scratch.unlink()

def test_writes_outside_the_workspace():
    pathlib.Path(os.environ["OUTSIDE"], "escaped.txt").write_text("x")

def test_the_home_is_hidden():
    home = pathlib.Path(os.environ["HOME"])
    assert not (home / os.environ["SECRET"]).exists()
    (home / (os.environ["SECRET"] + ".copy")).write_text("stays in the sandbox")

def test_reaches_the_hosts_loopback():
    socket.create_connection(("127.0.0.1", int(os.environ["HOST_PORT"])), timeout=5).close()
"#;

/// A file in the real home the sandboxed tests must not see (removed after the test).
const SECRET: &str = ".huddle-sandbox-test-secret";

struct HomeSecret(std::path::PathBuf);

impl HomeSecret {
    fn create() -> HomeSecret {
        let home = std::env::var_os("HOME").expect("HOME is set");
        let path = Path::new(&home).join(SECRET);
        std::fs::write(&path, "not for tests").expect("write in the home");
        HomeSecret(path)
    }
}

impl Drop for HomeSecret {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        let _ = std::fs::remove_file(self.0.with_extension("copy"));
    }
}

/// Runs the five tests above with `mode`, `outside` as the directory outside the workspace
/// and `port` as a server's port on the host's loopback.
async fn run(mode: Sandbox, outside: &Path, port: u16) -> (Report, tempfile::TempDir) {
    let project = tempfile::Builder::new()
        .prefix("huddle-sandbox-")
        .tempdir()
        .unwrap();
    std::fs::write(project.path().join("test_sandbox.py"), TESTS).unwrap();
    let opts = RunOptions {
        sandbox: mode,
        env: vec![
            ("OUTSIDE".into(), outside.display().to_string()),
            ("HOST_PORT".into(), port.to_string()),
            ("SECRET".into(), SECRET.into()),
        ],
        ..opts()
    };
    let outcome = run_tests(project.path(), Framework::Pytest, &opts)
        .await
        .expect("pytest runs");
    (outcome.report, project)
}

#[tokio::test]
async fn the_sandbox_keeps_writes_in_the_workspace_hides_the_home_and_cuts_the_network() {
    require_pytest();
    require_bwrap();
    // Outside the workspace and outside /tmp (which the sandbox replaces): in target/.
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port();
    let secret = HomeSecret::create();

    let (report, project) = run(Sandbox::Required, outside.path(), port).await;
    assert_outcomes(
        &report,
        &[
            ("::test_writes_in_the_workspace", Outcome::Passed),
            ("::test_writes_in_tmp", Outcome::Passed),
            ("::test_writes_outside_the_workspace", Outcome::Failed),
            ("::test_the_home_is_hidden", Outcome::Passed),
            ("::test_reaches_the_hosts_loopback", Outcome::Failed),
        ],
    );
    assert!(project.path().join("made-by-the-test.txt").is_file());
    assert!(!outside.path().join("escaped.txt").exists());
    let copy = secret.0.with_file_name(format!("{SECRET}.copy"));
    assert!(!copy.exists(), "a write to the sandbox's home stays there");
    let failure = |suffix: &str| {
        let t = report.tests.iter().find(|t| t.nodeid.ends_with(suffix));
        t.and_then(|t| t.longrepr.clone()).unwrap_or_default()
    };
    assert!(
        failure("outside_the_workspace").contains("Read-only file system"),
        "{}",
        failure("outside_the_workspace")
    );

    let (report, _project) = run(Sandbox::Off, outside.path(), port).await;
    assert_eq!(
        outcome(&report, "::test_writes_outside_the_workspace"),
        Outcome::Passed
    );
    assert_eq!(
        outcome(&report, "::test_reaches_the_hosts_loopback"),
        Outcome::Passed
    );
    assert_eq!(
        outcome(&report, "::test_the_home_is_hidden"),
        Outcome::Failed
    );
    assert!(outside.path().join("escaped.txt").is_file());
}

#[tokio::test]
async fn jest_runs_in_the_sandbox_with_the_same_outcomes() {
    require_tool("node");
    require_bwrap();
    let project = fixture("jest");
    let sandboxed = RunOptions {
        sandbox: Sandbox::Required,
        ..opts()
    };
    let inside = run_tests(project.path(), Framework::Jest, &sandboxed)
        .await
        .expect("jest runs in the sandbox");
    let plain = RunOptions {
        sandbox: Sandbox::Off,
        ..opts()
    };
    let outside = run_tests(project.path(), Framework::Jest, &plain)
        .await
        .expect("jest runs");
    assert_eq!(inside.report.summary, outside.report.summary);
    assert!(inside.report.summary.passed > 0);
    assert_eq!(inside.report.command[0], outside.report.command[0]);
}

#[tokio::test]
async fn a_tiers_service_on_the_sandboxs_loopback_answers_its_tests() {
    require_bwrap();
    let python = fixture_source("tiers-python").join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/install-test-deps",
        python.display()
    );
    let project = fixture("tiers-python");
    let opts = TiersOptions {
        run: RunOptions {
            sandbox: Sandbox::Required,
            ..opts()
        },
        scope: Some(BTreeMap::from([(
            Tier::Integration,
            vec!["tests/integration/test_api.py".to_string()],
        )])),
        ..TiersOptions::default()
    };
    let report = run_tiers(project.path(), Framework::Pytest, &opts)
        .await
        .expect("the pipeline runs");
    let t = report
        .tiers
        .iter()
        .find(|t| t.tier == Tier::Integration)
        .expect("an integration tier");
    assert!(t.skipped.is_none(), "{:?}: {:?}", t.skipped, t.skip_detail);
    assert!(t.services[0].healthy, "{:?}", t.services[0]);
    // The fixture's known outcome: three pass, one fails on the implementation.
    assert_eq!((t.summary.passed, t.summary.failed), (3, 1));
}

const GIT_TESTS: &str = r##"
import pathlib

def test_adds_a_hook():
    hook = pathlib.Path(".git/hooks/post-commit")
    hook.write_text("#!/bin/sh\necho ran\n")

def test_sets_an_fsmonitor():
    with open(".git/config", "a") as config:
        config.write("[core]\n\tfsmonitor = ./planted.sh\n")
"##;

/// A repository's `.git` stays read-only in the sandbox's writable workspace: huddle's own git
/// calls run outside it, where a planted hook or `core.fsmonitor` would run. Without the
/// sandbox the same tests write both, so the check can fail.
#[tokio::test]
async fn a_sandboxed_test_cannot_change_the_repositorys_git_directory() {
    require_pytest();
    require_bwrap();
    require_tool("git");
    for (mode, planted) in [(Sandbox::Required, false), (Sandbox::Off, true)] {
        let project = tempfile::Builder::new()
            .prefix("huddle-sandbox-git-")
            .tempdir()
            .unwrap();
        let p = project.path();
        git(p, &["init", "-q"]);
        std::fs::write(p.join("test_git.py"), GIT_TESTS).unwrap();
        let config_before = std::fs::read_to_string(p.join(".git/config")).unwrap();
        let opts = RunOptions {
            sandbox: mode,
            ..opts()
        };
        let report = run_tests(p, Framework::Pytest, &opts)
            .await
            .expect("pytest runs")
            .report;
        let want = if planted {
            Outcome::Passed
        } else {
            Outcome::Failed
        };
        assert_outcomes(
            &report,
            &[
                ("::test_adds_a_hook", want),
                ("::test_sets_an_fsmonitor", want),
            ],
        );
        let config = std::fs::read_to_string(p.join(".git/config")).unwrap();
        assert_eq!(config != config_before, planted, "{mode:?}: {config}");
        assert_eq!(
            p.join(".git/hooks/post-commit").exists(),
            planted,
            "{mode:?}"
        );
    }
}
