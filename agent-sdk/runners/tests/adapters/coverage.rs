//! `--coverage`: each ecosystem's own coverage output reduced to one line percentage.

use crate::common::*;
use huddle_runners::{run_tests, Framework, RunOptions, RunnerError};

async fn line_percent(name: &str, fw: Framework) -> f64 {
    let project = fixture(name);
    let opts = RunOptions {
        coverage: true,
        ..opts()
    };
    let outcome = run_tests(project.path(), fw, &opts)
        .await
        .expect("the run is made");
    let coverage = outcome
        .report
        .coverage
        .clone()
        .unwrap_or_else(|| panic!("{name}: no coverage"));
    assert!(
        outcome.run_dir.join(&coverage.source).is_file(),
        "{name}: {}",
        coverage.source
    );
    assert!(
        coverage.line_percent > 0.0 && coverage.line_percent <= 100.0,
        "{name}: {coverage:?}"
    );
    // Coverage does not change what the tests report.
    assert!(
        outcome.report.summary.total >= 12,
        "{name}: {:?}",
        outcome.report.summary
    );
    coverage.line_percent
}

#[tokio::test]
async fn jest_coverage_comes_from_istanbul() {
    require_tool("node");
    line_percent("jest", Framework::Jest).await;
}

#[tokio::test]
async fn vitest_coverage_comes_from_its_v8_provider() {
    require_tool("node");
    line_percent("vitest", Framework::Vitest).await;
}

#[tokio::test]
async fn mocha_coverage_comes_from_c8() {
    require_tool("node");
    line_percent("mocha", Framework::Mocha).await;
}

#[tokio::test]
async fn pytest_coverage_comes_from_coverage_py() {
    require_pytest();
    line_percent("pytest", Framework::Pytest).await;
}

#[tokio::test]
async fn go_coverage_comes_from_the_cover_profile() {
    require_tool("go");
    line_percent("go", Framework::Go).await;
}

#[tokio::test]
async fn cargo_coverage_is_refused_clearly() {
    let project = fixture("cargo");
    let opts = RunOptions {
        coverage: true,
        ..opts()
    };
    let err = run_tests(project.path(), Framework::Cargo, &opts)
        .await
        .unwrap_err();
    assert!(matches!(err, RunnerError::Unsupported(_)), "{err}");
    assert!(err.to_string().contains("coverage"), "{err}");
}
