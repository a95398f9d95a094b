//! Framework detection: explicit choices first (flag, task metadata, shared memory), then the
//! project's files, with the reasoning `--explain` prints.

use crate::common::fixture;
use huddle_cli::test_command::{execute, TestArgs};
use huddle_runners::detect::{detect, Overrides, Source};
use huddle_runners::{Framework, PluginPolicy, RunnerError};
use serde_json::json;
use std::path::Path;

fn detected(dir: &Path) -> Framework {
    detect(dir, &Overrides::default())
        .expect("detected")
        .framework
}

fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn every_fixture_is_detected_from_its_files() {
    for (name, fw) in [
        ("pytest", Framework::Pytest),
        ("jest", Framework::Jest),
        ("vitest", Framework::Vitest),
        ("mocha", Framework::Mocha),
        ("go", Framework::Go),
        ("cargo", Framework::Cargo),
    ] {
        let d = detect(&crate::common::fixture_source(name), &Overrides::default()).unwrap();
        assert_eq!(d.framework, fw, "{name}: {}", d.explain());
        assert_eq!(d.source, Source::ProjectFiles);
    }
}

#[test]
fn the_test_script_decides_between_node_frameworks() {
    let both =
        r#"{"devDependencies": {"jest": "30", "vitest": "3"}, "scripts": {"test": "jest --ci"}}"#;
    let d = detect(
        project(&[("package.json", both)]).path(),
        &Overrides::default(),
    )
    .unwrap();
    assert_eq!(d.framework, Framework::Jest);
    assert!(d.reason.contains("test script"), "{}", d.reason);

    let no_script = r#"{"devDependencies": {"jest": "30", "vitest": "3"}}"#;
    let d = detect(
        project(&[("package.json", no_script)]).path(),
        &Overrides::default(),
    )
    .unwrap();
    assert_eq!(d.framework, Framework::Vitest);
    assert!(d.reason.contains("preferred"), "{}", d.reason);

    let mocha = r#"{"dependencies": {"mocha": "11"}, "scripts": {"test": "node x.js"}}"#;
    assert_eq!(
        detected(project(&[("package.json", mocha)]).path()),
        Framework::Mocha
    );
}

#[test]
fn pytest_is_found_from_any_of_its_configurations() {
    let cases: [&[(&str, &str)]; 6] = [
        &[("pytest.ini", "[pytest]\n")],
        &[(
            "pyproject.toml",
            "[tool.pytest.ini_options]\naddopts = \"-q\"\n",
        )],
        &[("setup.cfg", "[tool:pytest]\n")],
        &[("tox.ini", "[pytest]\n")],
        &[("conftest.py", "")],
        &[("tests/test_thing.py", "def test_x(): pass\n")],
    ];
    for files in cases {
        assert_eq!(
            detected(project(files).path()),
            Framework::Pytest,
            "{files:?}"
        );
    }
    // A package.json without a test framework does not hide pytest.
    let mixed = project(&[
        ("package.json", r#"{"devDependencies": {"eslint": "9"}}"#),
        ("pytest.ini", ""),
    ]);
    assert_eq!(detected(mixed.path()), Framework::Pytest);
}

#[test]
fn explicit_choices_outrank_files_in_order() {
    let dir = fixture("go");
    let meta = json!({"framework": "pytest"});
    let memory = json!({"test_strategy": {"test_framework": "cargo test"}});
    let all = Overrides {
        flag: Some("jest"),
        task_metadata: Some(&meta),
        shared_memory: Some(&memory),
    };
    let d = detect(dir.path(), &all).unwrap();
    assert_eq!((d.framework, d.source), (Framework::Jest, Source::Flag));
    let d = detect(dir.path(), &Overrides { flag: None, ..all }).unwrap();
    assert_eq!(
        (d.framework, d.source),
        (Framework::Pytest, Source::TaskMetadata)
    );
    let d = detect(
        dir.path(),
        &Overrides {
            flag: None,
            task_metadata: None,
            ..all
        },
    )
    .unwrap();
    assert_eq!(
        (d.framework, d.source),
        (Framework::Cargo, Source::SharedMemory)
    );
    let err = detect(
        dir.path(),
        &Overrides {
            flag: Some("junit5"),
            ..Overrides::default()
        },
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("expected one of pytest, jest, vitest, mocha, node-test, go, cargo"),
        "{err}"
    );
}

#[test]
fn an_empty_project_names_what_was_looked_for() {
    let dir = tempfile::tempdir().unwrap();
    let err = detect(dir.path(), &Overrides::default()).unwrap_err();
    assert!(matches!(err, RunnerError::NotDetected { .. }));
    let msg = err.to_string();
    for wanted in [
        "package.json",
        "pytest.ini",
        "pyproject.toml",
        "go.mod",
        "Cargo.toml",
        "conftest.py",
    ] {
        assert!(msg.contains(wanted), "{wanted} missing from: {msg}");
    }
    assert_eq!(err.exit_code(), 2);
}

fn explain_args(project: &Path) -> TestArgs {
    TestArgs {
        project: project.into(),
        framework: None,
        json: false,
        explain: true,
        list: false,
        failed: false,
        affected: false,
        base: "HEAD".into(),
        filter: None,
        timeout: 60,
        coverage: false,
        plugins: PluginPolicy::Auto,
        sandbox: huddle_runners::Sandbox::Auto,
        runs_dir: None,
        runner_args: Vec::new(),
        tiers: Default::default(),
    }
}

#[tokio::test]
async fn explain_prints_the_choice_and_every_check() {
    let dir = fixture("vitest");
    let out = execute(&explain_args(dir.path())).await;
    assert_eq!(out.code, 0);
    assert!(
        out.stdout
            .starts_with("framework: vitest\nreason: package.json's test script runs vitest"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("--framework: not set"),
        "{}",
        out.stdout
    );

    let empty = tempfile::tempdir().unwrap();
    let out = execute(&explain_args(empty.path())).await;
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("no test framework detected") && out.stderr.contains("go.mod"),
        "{}",
        out.stderr
    );
}
