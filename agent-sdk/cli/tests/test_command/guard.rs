//! The argument guard: filters, paths, test ids and revisions are checked before any process
//! starts, with an error that names the argument and the reason.

use crate::common::*;
use huddle_cli::test_command::{execute, TestArgs};
use huddle_runners::guard::{
    check_filter, check_path, check_revision, check_runner_args, check_test_id, MAX_RUNNER_ARGS,
};
use huddle_runners::{run_tests, Framework, PluginPolicy, RunOptions, RunnerError, Selection};

#[test]
fn filters_that_look_like_options_are_refused() {
    let err = check_filter("-rf").unwrap_err();
    assert_eq!(err.what, "filter");
    assert!(err.to_string().contains("starts with '-'"), "{err}");
}

#[test]
fn filters_with_dot_dot_control_characters_or_too_long_are_refused() {
    assert!(check_filter("../etc").unwrap_err().reason.contains("'..'"));
    assert!(check_filter("a\u{1b}[31mb")
        .unwrap_err()
        .reason
        .contains("U+001B"));
    assert!(check_filter("a\nb").unwrap_err().reason.contains("U+000A"));
    let long = "x".repeat(201);
    assert!(check_filter(&long)
        .unwrap_err()
        .reason
        .contains("201 characters"));
    assert!(check_filter("").is_err());
}

#[test]
fn ordinary_filters_pass_unchanged() {
    for f in [
        "add table",
        "test_add and not slow",
        "héllo wörld ✓",
        "^TestAdd$",
        &"x".repeat(200),
    ] {
        assert_eq!(check_filter(f), Ok(f));
    }
}

#[test]
fn paths_test_ids_and_revisions_have_their_own_rules() {
    assert!(check_path("../outside.py").is_err());
    assert!(check_path("/etc/passwd").is_err());
    assert!(check_path("--help").is_err());
    assert_eq!(check_path("tests/test_x.py"), Ok("tests/test_x.py"));
    assert_eq!(
        check_test_id("t.py::test_range[1..3]"),
        Ok("t.py::test_range[1..3]")
    );
    assert!(check_test_id("-k").is_err());
    assert!(check_revision("main..feature").is_err());
    assert!(check_revision("--output=x").is_err());
    assert_eq!(check_revision("HEAD~1"), Ok("HEAD~1"));
}

#[tokio::test]
async fn a_refused_filter_starts_no_process_and_writes_no_run() {
    let project = fixture("pytest");
    let refused = RunOptions {
        filter: Some("--collect-only".into()),
        ..opts()
    };
    let err = run_tests(project.path(), Framework::Pytest, &refused)
        .await
        .unwrap_err();
    assert!(matches!(err, RunnerError::Guard(_)), "{err}");
    assert_eq!(err.exit_code(), 2);
    assert!(!project.path().join(".huddle").exists());

    let outside = RunOptions {
        selection: Selection::Paths(vec!["../../etc".into()]),
        ..opts()
    };
    let err = run_tests(project.path(), Framework::Pytest, &outside)
        .await
        .unwrap_err();
    assert!(err.to_string().starts_with("refused path"), "{err}");
}

#[tokio::test]
async fn the_command_reports_a_refused_filter_with_exit_code_2() {
    let project = fixture("go");
    let args = TestArgs {
        project: project.path().into(),
        framework: None,
        json: false,
        explain: false,
        list: false,
        failed: false,
        affected: false,
        base: "HEAD".into(),
        filter: Some("-exec=evil".into()),
        timeout: 60,
        coverage: false,
        plugins: PluginPolicy::Auto,
        sandbox: huddle_runners::Sandbox::Auto,
        runs_dir: None,
        runner_args: Vec::new(),
        tiers: Default::default(),
    };
    let out = execute(&args).await;
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("refused filter"), "{}", out.stderr);
    assert!(out.stdout.is_empty());
}

#[test]
fn runner_arguments_may_be_options_but_are_bounded() {
    let ok: Vec<String> = vec!["--config".into(), "config/jest.config.js".into()];
    assert_eq!(check_runner_args(&ok), Ok(()));
    let err = check_runner_args(&["--config\u{7}".into()]).unwrap_err();
    assert_eq!(err.what, "runner argument");
    assert!(err.reason.contains("U+0007"), "{err}");
    assert!(check_runner_args(&[String::new()]).is_err());
    let many = vec!["-i".to_string(); MAX_RUNNER_ARGS + 1];
    assert!(check_runner_args(&many)
        .unwrap_err()
        .reason
        .contains(&format!("the limit is {MAX_RUNNER_ARGS}")));
}

#[tokio::test]
async fn the_command_refuses_a_runner_argument_that_redirects_the_report() {
    let project = fixture("jest");
    let args = TestArgs {
        project: project.path().into(),
        framework: None,
        json: false,
        explain: false,
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
        runner_args: vec!["--output-file=/tmp/elsewhere.json".into()],
        tiers: Default::default(),
    };
    let out = execute(&args).await;
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("refused runner argument: \"--output-file=/tmp/elsewhere.json\""),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("--json, --outputFile"),
        "{}",
        out.stderr
    );
    assert!(!project.path().join(".huddle").exists(), "nothing ran");
}
