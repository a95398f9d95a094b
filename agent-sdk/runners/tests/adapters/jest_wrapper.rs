//! jest through a wrapper, on tests/fixtures/jest-wrapper: package.json depends only on a
//! toolkit whose `test` command runs the jest it brings (as kcd-scripts does), and a root
//! `jest.config.js` configures it. Detection must choose jest and say why, and the run must
//! agree with the toolkit's own `test` command.

use crate::common::*;
use crate::own_summary::summary_of;
use huddle_runners::detect::{detect, Source};
use huddle_runners::{run_tests, Framework, Overrides};

#[tokio::test]
async fn jest_through_a_toolkit_is_detected_and_agrees_with_the_toolkits_test_command() {
    require_tool("node");
    let project = fixture("jest-wrapper");
    let found = detect(project.path(), &Overrides::default()).expect("detects a framework");
    assert_eq!(found.framework, Framework::Jest, "{}", found.explain());
    assert_eq!(found.source, Source::ProjectFiles);
    assert!(found.reason.contains("jest.config.js"), "{}", found.reason);
    assert!(
        found.checks.iter().any(|c| c.contains("jest is installed")),
        "{}",
        found.explain()
    );

    let report = run_tests(project.path(), found.framework, &opts())
        .await
        .expect("jest runs")
        .report;
    assert_eq!(counts(&report), (2, 1, 0, 0, 3), "{:#?}", report.tests);
    assert_eq!(
        summary_of(project.path(), "fixture-scripts", &["test"]),
        (2, 1, 0, 3),
        "the toolkit's own `test` run"
    );
}

#[test]
fn a_config_file_alone_names_the_runner() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("package.json"),
        r#"{"scripts": {"test": "x test"}}"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("vitest.config.ts"), "export default {}\n").unwrap();
    let found = detect(dir.path(), &Overrides::default()).expect("detects");
    assert_eq!(found.framework, Framework::Vitest);
    assert!(
        found.reason.contains("vitest.config.ts"),
        "{}",
        found.reason
    );
}
