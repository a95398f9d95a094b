//! The caller's runner arguments (`huddle test -- …`): refused before anything starts when
//! they would redirect the reporter output huddle reads or stop the runner from running the
//! tests, and refused for the runners that do not take them.

use crate::common::*;
use huddle_runners::{list_tests, run_tests, Framework, RunOptions, RunnerError};

async fn refusal(fixture_name: &str, fw: Framework, args: &[&str]) -> String {
    let project = fixture(fixture_name);
    let opts = RunOptions {
        runner_args: args.iter().map(|a| a.to_string()).collect(),
        ..opts()
    };
    let err = run_tests(project.path(), fw, &opts)
        .await
        .expect_err("refused");
    assert_eq!(err.exit_code(), 2, "{err}");
    assert!(
        !project.path().join(".huddle").exists(),
        "a refused run starts nothing: {err}"
    );
    let listed = list_tests(project.path(), fw, &opts)
        .await
        .expect_err("listing refuses the same arguments");
    assert_eq!(listed.to_string(), err.to_string());
    err.to_string()
}

#[tokio::test]
async fn reporter_and_output_options_are_refused_per_runner() {
    let cases: &[(&str, Framework, &[&str], &str)] = &[
        ("jest", Framework::Jest, &["--json"], "\"--json\""),
        (
            "jest",
            Framework::Jest,
            &["-i", "--outputFile", "x.json"],
            "\"--outputFile\"",
        ),
        ("jest", Framework::Jest, &["--watchAll"], "\"--watchAll\""),
        (
            "vitest",
            Framework::Vitest,
            &["--outputFile.json=x"],
            "\"--outputFile.json=x\"",
        ),
        ("vitest", Framework::Vitest, &["-w"], "\"-w\""),
        ("mocha", Framework::Mocha, &["-R", "spec"], "\"-R\""),
        (
            "mocha",
            Framework::Mocha,
            &["--reporter-option=output=x"],
            "reporter-option",
        ),
        ("mocha", Framework::Mocha, &["--dry-run"], "\"--dry-run\""),
    ];
    for (fixture_name, fw, args, named) in cases {
        let text = refusal(fixture_name, *fw, args).await;
        assert!(
            text.starts_with("refused runner argument: ") && text.contains(named),
            "{fw} {args:?}: {text}"
        );
        assert!(text.contains("huddle sets the reporter itself"), "{text}");
    }
}

#[tokio::test]
async fn control_characters_are_refused() {
    let text = refusal("jest", Framework::Jest, &["--config", "a\u{1b}[2J.js"]).await;
    assert!(text.contains("U+001B"), "{text}");
}

#[tokio::test]
async fn runners_without_pass_through_say_so() {
    let project = fixture("go");
    let opts = RunOptions {
        runner_args: vec!["-count=1".into()],
        ..opts()
    };
    let err = run_tests(project.path(), Framework::Go, &opts)
        .await
        .expect_err("go takes no runner arguments yet");
    assert!(matches!(err, RunnerError::Unsupported(_)), "{err}");
    assert!(
        err.to_string().contains("jest, vitest and mocha only"),
        "{err}"
    );
    assert!(!project.path().join(".huddle").exists());
}
