//! `--affected` follows the import graph: on go (tests/fixtures/go-deps: mathx ← stats ←
//! report, and an unrelated package) and on pytest (tests/fixtures/pytest-imports). Breaking
//! the bottom module must select every test the change can fail, so the affected run finds
//! the failures the full suite finds.

use crate::common::*;
use huddle_runners::affected::{affected, AffectedPlan};
use huddle_runners::{run_tests, Framework, Outcome, Report, RunOptions, Selection};
use std::path::Path;

const FW: Framework = Framework::Go;

fn failures(report: &Report) -> Vec<String> {
    sorted(
        report
            .tests
            .iter()
            .filter(|t| t.outcome == Outcome::Failed)
            .map(|t| t.nodeid.clone())
            .collect(),
    )
}

async fn run(project: &Path, selection: Selection) -> Report {
    let opts = RunOptions {
        selection,
        ..opts()
    };
    run_tests(project, FW, &opts)
        .await
        .expect("go test runs")
        .report
}

#[tokio::test]
async fn a_change_selects_its_package_and_every_importer() {
    require_tool("go");
    require_tool("git");
    let project = fixture("go-deps");
    git_commit_all(project.path());
    let add = project.path().join("mathx/add.go");
    let broken = std::fs::read_to_string(&add)
        .unwrap()
        .replace("a + b", "a - b");
    std::fs::write(&add, broken).unwrap();

    let a = affected(project.path(), FW, None).await.expect("affected");
    let AffectedPlan::Subset { selection, reasons } = a.plan else {
        panic!("expected a subset: {:?}", a.plan)
    };
    assert_eq!(
        selection,
        Selection::Paths(vec!["./mathx".into(), "./stats".into(), "./report".into()])
    );
    assert_eq!(
        reasons,
        ["mathx/add.go: package ./mathx and the packages importing it: ./stats, ./report"]
    );

    let subset = run(project.path(), selection).await;
    let full = run(project.path(), Selection::All).await;
    assert_eq!(failures(&full).len(), 3, "{:#?}", full.tests);
    assert_eq!(
        failures(&subset),
        failures(&full),
        "the affected run finds every failure"
    );
}

#[tokio::test]
async fn a_package_nobody_imports_selects_itself_and_a_test_file_its_package() {
    require_tool("go");
    require_tool("git");
    let project = fixture("go-deps");
    git_commit_all(project.path());
    for (file, want) in [
        ("unrelated/strings.go", "./unrelated"),
        ("mathx/add_test.go", "./mathx"),
    ] {
        let path = project.path().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, format!("{text}\n// touched\n")).unwrap();
        let a = affected(project.path(), FW, None).await.expect("affected");
        let AffectedPlan::Subset { selection, .. } = a.plan else {
            panic!("expected a subset: {:?}", a.plan)
        };
        assert_eq!(selection, Selection::Paths(vec![want.into()]), "{file}");
        std::fs::write(&path, text).unwrap();
    }
}

/// tests/fixtures/pytest-imports: app.core ← app.service ← app.api, each with a test file;
/// only tests/test_core.py is named after core. Breaking core fails all three.
#[tokio::test]
async fn pytest_follows_imports_beside_names() {
    require_pytest();
    require_tool("git");
    let project = fixture("pytest-imports");
    git_commit_all(project.path());
    let core = project.path().join("app/core.py");
    let broken = std::fs::read_to_string(&core)
        .unwrap()
        .replace("a + b", "a - b");
    std::fs::write(&core, broken).unwrap();

    let a = affected(project.path(), Framework::Pytest, None)
        .await
        .expect("affected");
    let AffectedPlan::Subset { selection, reasons } = a.plan else {
        panic!("expected a subset: {:?}", a.plan)
    };
    assert_eq!(
        selection.clone(),
        Selection::Paths(vec![
            "tests/test_core.py".into(),
            "tests/test_service.py".into(),
            "tests/test_api.py".into(),
        ])
    );
    assert_eq!(
        reasons,
        ["app/core.py → tests/test_core.py (by name), tests/test_service.py, tests/test_api.py (they import it)"]
    );
    let opts = |selection| RunOptions {
        selection,
        ..opts()
    };
    let subset = run_tests(project.path(), Framework::Pytest, &opts(selection))
        .await
        .expect("runs")
        .report;
    let full = run_tests(project.path(), Framework::Pytest, &opts(Selection::All))
        .await
        .expect("runs")
        .report;
    assert_eq!(failures(&full).len(), 3, "{:#?}", full.tests);
    assert_eq!(
        failures(&subset),
        failures(&full),
        "the affected run finds every failure"
    );
}
