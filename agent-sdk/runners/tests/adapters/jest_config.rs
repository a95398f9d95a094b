//! jest with its config given only in the test script: real jest on tests/fixtures/jest-config
//! (TypeScript through ts-jest, `roots` and an `@/` alias in `config/jest.config.js`, the
//! layout of taniarascia/takenote). The script's options, environment and test paths reach
//! jest; so do the caller's arguments after `--`, which win over the script's.

use crate::common::*;
use huddle_runners::{list_tests, run_tests, Framework, Outcome, Report, RunOptions, Selection};
use std::path::Path;

const FW: Framework = Framework::Jest;

const EXPECTED: &[(&str, Outcome)] = &[
    ("tests/unit/math.test.ts::adds two numbers", Outcome::Passed),
    ("::multiplies with a wrong expectation", Outcome::Failed),
    ("::divides by zero and throws", Outcome::Failed),
    ("::is not ready yet", Outcome::Skipped),
    ("::add(1, 1) = 2", Outcome::Passed),
    ("::add(2, 2) = 4", Outcome::Passed),
    ("::add(2, 3) = 6", Outcome::Failed),
    ("::outer::inner::works when nested", Outcome::Passed),
    ("::héllo wörld ✓ 日本語", Outcome::Passed),
    (
        "tests/unit/strings.test.ts::shout upper-cases and adds a bang",
        Outcome::Passed,
    ),
    (
        "tests/unit/strings.test.ts::whisper lower-cases",
        Outcome::Passed,
    ),
    ("tests/unit/broken.test.ts", Outcome::Error),
];

/// Replaces the copy's `npm test` script.
pub(crate) fn set_test_script(project: &Path, script: &str) {
    let path = project.join("package.json");
    let mut pkg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    pkg["scripts"]["test"] = script.into();
    std::fs::write(&path, serde_json::to_string_pretty(&pkg).unwrap()).unwrap();
}

fn assert_fixture_outcomes(report: &Report) {
    assert_eq!(
        counts(report),
        (7, 3, 1, 1, 12),
        "summary: {:?}",
        report.summary
    );
    assert_outcomes(report, EXPECTED);
    assert!(longrepr(report, "::multiplies with a wrong expectation").contains("Expected: 7"));
    assert!(longrepr(report, "tests/unit/broken.test.ts").contains("does-not-exist"));
}

#[tokio::test]
async fn jest_takes_the_config_from_the_test_script() {
    require_tool("node");
    let project = fixture("jest-config");
    let report = run_tests(project.path(), FW, &opts())
        .await
        .expect("jest runs")
        .report;
    assert_fixture_outcomes(&report);
    let config = report.command.iter().position(|a| a == "--config");
    assert_eq!(
        config.map(|i| report.command[i + 1].as_str()),
        Some("config/jest.config.js"),
        "{:?}",
        report.command
    );
}

#[tokio::test]
async fn jest_config_counts_equal_what_jest_itself_prints() {
    require_tool("node");
    let project = fixture("jest-config");
    let direct = std::process::Command::new("node")
        .args([
            "node_modules/.bin/jest",
            "--config",
            "config/jest.config.js",
            "--ci",
        ])
        .current_dir(project.path())
        .output()
        .expect("jest runs directly");
    let text = String::from_utf8_lossy(&direct.stderr);
    assert!(
        text.contains("Tests:       3 failed, 1 skipped, 7 passed, 11 total")
            && text.contains("Test Suites: 2 failed, 1 passed, 3 total"),
        "jest printed: {text}"
    );
    let report = run_tests(project.path(), FW, &opts())
        .await
        .expect("jest runs")
        .report;
    // jest's 11 tests, plus the suite that fails to load as one error.
    assert_eq!(counts(&report), (7, 3, 1, 1, 12));
}

#[tokio::test]
async fn without_the_config_every_suite_fails_to_parse() {
    require_tool("node");
    let project = fixture("jest-config");
    // What huddle ran before it read the script: plain `jest`.
    set_test_script(project.path(), "jest");
    let report = run_tests(project.path(), FW, &opts())
        .await
        .expect("jest runs")
        .report;
    assert_eq!(counts(&report), (0, 0, 4, 0, 4), "{:?}", report.tests);
    assert_eq!(outcome(&report, "tests/e2e/note.test.ts"), Outcome::Error);
}

#[tokio::test]
async fn the_scripts_environment_and_test_paths_reach_jest() {
    require_tool("node");
    let project = fixture("jest-config");
    std::fs::write(
        project.path().join("tests/unit/env.test.ts"),
        "test(\"sees the script's variables\", () => {\n  \
         expect(process.env.NOTES_MODE).toBe(\"from-script\");\n});\n",
    )
    .unwrap();
    set_test_script(
        project.path(),
        "cross-env NOTES_MODE=from-script jest -c config/jest.config.js --reporters default \
         --coverage --testPathPatterns tests/unit/env && echo done",
    );
    let report = run_tests(project.path(), FW, &opts())
        .await
        .expect("jest runs")
        .report;
    assert_eq!(counts(&report), (1, 0, 0, 0, 1), "{:?}", report.tests);
    assert!(
        !report
            .command
            .iter()
            .any(|a| a == "--coverage" || a == "default"),
        "reporters and coverage stay huddle's: {:?}",
        report.command
    );
    // The script's test paths are for whole-suite runs: a selection replaces them.
    let opts = RunOptions {
        selection: Selection::Paths(vec!["tests/unit/strings.test.ts".into()]),
        ..opts()
    };
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("jest runs")
        .report;
    assert_eq!(counts(&report), (2, 0, 0, 0, 2), "{:?}", report.tests);
}

#[tokio::test]
async fn the_callers_arguments_after_double_dash_reach_jest() {
    require_tool("node");
    let project = fixture("jest-config");
    set_test_script(project.path(), "jest");
    let opts = RunOptions {
        runner_args: vec!["--config".into(), "config/jest.config.js".into()],
        ..opts()
    };
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("jest runs")
        .report;
    assert_fixture_outcomes(&report);
}

#[tokio::test]
async fn the_callers_config_replaces_the_scripts() {
    require_tool("node");
    let project = fixture("jest-config");
    std::fs::write(
        project.path().join("config/jest.strings.config.js"),
        "const base = require(\"./jest.config\");\n\
         module.exports = { ...base, testMatch: [\"**/strings.test.ts\"] };\n",
    )
    .unwrap();
    let opts = RunOptions {
        runner_args: vec!["-c".into(), "config/jest.strings.config.js".into()],
        ..opts()
    };
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("jest runs")
        .report;
    // Both configs on one command line would be an error; only the caller's is passed.
    assert_eq!(counts(&report), (2, 0, 0, 0, 2), "{:?}", report.tests);
    assert_eq!(
        report
            .command
            .iter()
            .filter(|a| a.contains("jest.config.js") || a.contains("strings.config"))
            .count(),
        1,
        "{:?}",
        report.command
    );
}

#[tokio::test]
async fn jest_config_listing_gives_the_runs_ids() {
    require_tool("node");
    let project = fixture("jest-config");
    let listing = list_tests(project.path(), FW, &opts())
        .await
        .expect("jest lists");
    assert_eq!(listing.tests.len(), 11, "{:?}", listing.tests);
    assert!(
        listing
            .errors
            .iter()
            .any(|e| e.starts_with("tests/unit/broken.test.ts: ")),
        "{:?}",
        listing.errors
    );
    let report = run_tests(project.path(), FW, &opts())
        .await
        .expect("jest runs")
        .report;
    assert_eq!(sorted(listing.tests), test_ids(&report));
}

#[tokio::test]
async fn a_config_jest_cannot_find_is_an_error_naming_the_missing_report() {
    require_tool("node");
    let project = fixture("jest-config");
    set_test_script(project.path(), "jest --config config/missing.config.js");
    let outcome = run_tests(project.path(), FW, &opts())
        .await
        .expect("jest runs");
    let report = &outcome.report;
    assert_eq!(counts(report), (0, 0, 1, 0, 1), "{:?}", report.tests);
    let text = longrepr(report, "[runner]");
    assert!(
        text.contains(&outcome.run_dir.join("jest.json").display().to_string()),
        "{text}"
    );
    assert!(text.contains("missing.config.js"), "jest's stderr: {text}");
}
