//! `--affected`: real git repositories made from the fixtures; a change maps to the tests that
//! cover it (the runner's related mode, naming conventions, packages, test targets), and the
//! mapped run really runs only those tests. Shared code, configuration and unmapped files fall
//! back to the full suite, saying why.

use crate::common::*;
use huddle_runners::affected::{affected, AffectedPlan};
use huddle_runners::{run_tests, Framework, RunOptions, Selection};
use std::path::Path;

fn touch(dir: &Path, file: &str) {
    let path = dir.join(file);
    let mut text = std::fs::read_to_string(&path).unwrap_or_default();
    text.push('\n');
    std::fs::write(path, text).unwrap();
}

/// Commits the fixture, changes `file`, and returns the plan.
async fn plan_for(
    fixture_name: &str,
    fw: Framework,
    file: &str,
) -> (tempfile::TempDir, AffectedPlan) {
    let project = fixture(fixture_name);
    git_commit_all(project.path());
    touch(project.path(), file);
    let a = affected(project.path(), fw, None).await.expect("affected");
    assert_eq!(a.changed, [file], "changed files");
    (project, a.plan)
}

/// Runs the subset of `plan` and returns (passed, total).
async fn run_subset(project: &Path, fw: Framework, plan: AffectedPlan) -> (usize, usize) {
    let AffectedPlan::Subset { selection, .. } = plan else {
        panic!("expected a subset: {plan:?}")
    };
    let opts = RunOptions {
        selection,
        ..opts()
    };
    let report = run_tests(project, fw, &opts)
        .await
        .expect("affected run")
        .report;
    (report.summary.passed, report.summary.total)
}

#[tokio::test]
async fn jest_uses_find_related_tests() {
    require_tool("node");
    let (project, plan) = plan_for("jest", Framework::Jest, "src/strings.js").await;
    let AffectedPlan::Subset { selection, reasons } = &plan else {
        panic!("{plan:?}")
    };
    assert_eq!(
        selection,
        &Selection::Related(vec!["src/strings.js".into()])
    );
    assert_eq!(
        reasons,
        &["src/strings.js: jest --findRelatedTests (the test files importing it, directly or not)"]
    );
    assert_eq!(
        run_subset(project.path(), Framework::Jest, plan).await,
        (2, 2)
    );
}

#[tokio::test]
async fn vitest_uses_related() {
    require_tool("node");
    let (project, plan) = plan_for("vitest", Framework::Vitest, "src/strings.js").await;
    assert_eq!(
        run_subset(project.path(), Framework::Vitest, plan).await,
        (2, 2)
    );
}

#[tokio::test]
async fn mocha_maps_a_source_file_to_its_spec_by_name() {
    require_tool("node");
    let (project, plan) = plan_for("mocha", Framework::Mocha, "src/strings.js").await;
    let AffectedPlan::Subset { selection, .. } = &plan else {
        panic!("{plan:?}")
    };
    assert_eq!(
        selection,
        &Selection::Paths(vec!["test/strings.spec.js".into()])
    );
    assert_eq!(
        run_subset(project.path(), Framework::Mocha, plan).await,
        (2, 2)
    );
}

#[tokio::test]
async fn pytest_maps_a_module_to_its_test_module_by_name() {
    require_pytest();
    let (project, plan) = plan_for("pytest", Framework::Pytest, "pkg/strings.py").await;
    let AffectedPlan::Subset { selection, .. } = &plan else {
        panic!("{plan:?}")
    };
    assert_eq!(
        selection,
        &Selection::Paths(vec!["tests/test_strings.py".into()])
    );
    assert_eq!(
        run_subset(project.path(), Framework::Pytest, plan).await,
        (2, 2)
    );
}

#[tokio::test]
async fn go_maps_a_file_to_its_package() {
    require_tool("go");
    let (project, plan) = plan_for("go", Framework::Go, "strs/strs.go").await;
    let AffectedPlan::Subset { selection, .. } = &plan else {
        panic!("{plan:?}")
    };
    assert_eq!(selection, &Selection::Paths(vec!["./strs".into()]));
    assert_eq!(
        run_subset(project.path(), Framework::Go, plan).await,
        (2, 2)
    );
}

#[tokio::test]
async fn cargo_maps_an_integration_test_to_its_target() {
    require_tool("cargo");
    let (project, plan) = plan_for("cargo", Framework::Cargo, "tests/strings.rs").await;
    let AffectedPlan::Subset { selection, .. } = &plan else {
        panic!("{plan:?}")
    };
    assert_eq!(
        selection,
        &Selection::Paths(vec!["tests/strings.rs".into()])
    );
    assert_eq!(
        run_subset(project.path(), Framework::Cargo, plan).await,
        (2, 2)
    );
}

#[tokio::test]
async fn shared_code_config_and_unmapped_files_run_the_full_suite() {
    let cases = [
        (
            "jest",
            Framework::Jest,
            "src/lib/format.js",
            "shared code (lib/)",
        ),
        (
            "pytest",
            Framework::Pytest,
            "pkg/lib/format.py",
            "shared code (lib/)",
        ),
        (
            "go",
            Framework::Go,
            "internal/lib/format.go",
            "shared code (lib/)",
        ),
        (
            "mocha",
            Framework::Mocha,
            "package-lock.json",
            "configuration or a lockfile",
        ),
        (
            "cargo",
            Framework::Cargo,
            "src/lib.rs",
            "belongs to the root crate",
        ),
        ("pytest", Framework::Pytest, "pkg/calc.py", ""),
    ];
    for (name, fw, file, why) in cases {
        let (_project, plan) = plan_for(name, fw, file).await;
        match plan {
            AffectedPlan::Full { reason } => assert!(reason.contains(why), "{file}: {reason}"),
            AffectedPlan::Subset { ref selection, .. } if file == "pkg/calc.py" => {
                assert_eq!(
                    selection,
                    &Selection::Paths(vec!["tests/test_calc.py".into()])
                );
            }
            other => panic!("{file}: expected the full suite, got {other:?}"),
        }
    }
    // A source file with no test named after it.
    let project = fixture("mocha");
    git_commit_all(project.path());
    std::fs::write(
        project.path().join("src/orphan.js"),
        "module.exports = 1;\n",
    )
    .unwrap();
    let plan = affected(project.path(), Framework::Mocha, None)
        .await
        .unwrap()
        .plan;
    let AffectedPlan::Full { reason } = plan else {
        panic!("{plan:?}")
    };
    assert!(
        reason.contains("no test found for src/orphan.js"),
        "{reason}"
    );
}

#[tokio::test]
async fn no_change_or_only_docs_runs_nothing() {
    let project = fixture("pytest");
    git_commit_all(project.path());
    let plan = affected(project.path(), Framework::Pytest, None)
        .await
        .unwrap()
        .plan;
    assert_eq!(
        plan,
        AffectedPlan::Nothing {
            reason: "no files changed".into()
        }
    );
    std::fs::write(project.path().join("README.md"), "# notes\n").unwrap();
    let plan = affected(project.path(), Framework::Pytest, None)
        .await
        .unwrap()
        .plan;
    assert!(matches!(plan, AffectedPlan::Nothing { .. }), "{plan:?}");
}

#[tokio::test]
async fn base_revision_includes_committed_changes() {
    let project = fixture("go");
    git_commit_all(project.path());
    touch(project.path(), "strs/strs.go");
    git(project.path(), &["commit", "-q", "-am", "change strs"]);
    let head = affected(project.path(), Framework::Go, None).await.unwrap();
    assert!(head.changed.is_empty(), "nothing changed since HEAD");
    let base = affected(project.path(), Framework::Go, Some("HEAD~1"))
        .await
        .unwrap();
    assert_eq!(base.changed, ["strs/strs.go"]);
    assert!(
        affected(project.path(), Framework::Go, Some("HEAD~1..HEAD"))
            .await
            .is_err()
    );
}
