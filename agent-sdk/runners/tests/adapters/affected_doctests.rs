//! `--affected` on a pytest project with doctests (tests/fixtures/pytest-doctests:
//! `--doctest-modules --doctest-glob=*.rst`, testpaths `shop tests docs`) and virtualenvs
//! inside it. Breaking `shop/prices.py` fails a test, the module's own two doctests, the
//! doctest of `shop/cart.py` (which imports it) and `docs/prices.rst` (whose example imports
//! it): the affected run must find every failure the full suite finds. Files in an untracked
//! `.venv/`, or in a virtualenv by another name (known by its `pyvenv.cfg`), are not the
//! project's code: they neither widen the selection nor force the full suite.

use crate::common::*;
use huddle_runners::affected::{affected, AffectedPlan};
use huddle_runners::{run_tests, Framework, Outcome, Report, RunOptions, Selection};
use std::path::Path;

const FW: Framework = Framework::Pytest;

fn failures(report: &Report) -> Vec<String> {
    sorted(
        report
            .tests
            .iter()
            .filter(|t| t.outcome.is_failure())
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
        .expect("pytest runs")
        .report
}

/// A real virtualenv at `dir` (no pip: nothing is downloaded) with a module in its
/// site-packages, untracked and not ignored by git.
fn virtualenv_with_a_module(project: &Path, dir: &str) {
    let out = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip", dir])
        .current_dir(project)
        .output()
        .expect("python3 -m venv runs");
    assert!(
        out.status.success(),
        "python3 -m venv: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lib = project.join(dir).join("lib");
    let python = std::fs::read_dir(&lib)
        .expect("the venv's lib/")
        .flatten()
        .next()
        .expect("lib/pythonX.Y")
        .path();
    let site = python.join("site-packages");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(site.join("helper.py"), "def help():\n    return 1\n").unwrap();
}

#[tokio::test]
async fn a_changed_module_selects_its_doctests_and_virtualenvs_are_not_code() {
    require_pytest();
    require_tool("git");
    let project = fixture("pytest-doctests");
    let root = project.path();
    git_commit_all(root);
    virtualenv_with_a_module(root, ".venv");
    virtualenv_with_a_module(root, "envs/py311");

    let a = affected(root, FW, None).await.expect("affected");
    assert!(
        a.changed.iter().any(|f| f.starts_with(".venv/"))
            && a.changed.iter().any(|f| f.starts_with("envs/py311/")),
        "git reports the virtualenvs' files: {:?}",
        a.changed
    );
    assert!(
        matches!(a.plan, AffectedPlan::Nothing { .. }),
        "virtualenv files are not the project's code: {:?}",
        a.plan
    );

    let prices = root.join("shop/prices.py");
    let broken = std::fs::read_to_string(&prices)
        .unwrap()
        .replace("return net + net * TAX_PERCENT", "return net * TAX_PERCENT");
    std::fs::write(&prices, broken).unwrap();
    let a = affected(root, FW, None).await.expect("affected");
    let AffectedPlan::Subset { selection, reasons } = a.plan else {
        panic!("expected a subset: {:?}", a.plan)
    };
    let Selection::Paths(paths) = &selection else {
        panic!("{selection:?}")
    };
    assert_eq!(
        sorted(paths.clone()),
        [
            "docs/prices.rst",
            "shop/cart.py",
            "shop/prices.py",
            "tests/test_prices.py"
        ]
    );
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(reasons[0].contains("(doctests)"), "{reasons:?}");

    let full = run(root, Selection::All).await;
    let expected = [
        "docs/prices.rst::prices.rst",
        "shop/cart.py::shop.cart.total",
        "shop/prices.py::shop.prices",
        "shop/prices.py::shop.prices.gross",
        "tests/test_prices.py::test_gross_of_fifty",
    ];
    assert_eq!(failures(&full), expected, "the full suite's failures");
    let subset = run(root, selection).await;
    assert_eq!(
        failures(&subset),
        expected,
        "the affected run's failures: {:#?}",
        subset.tests
    );
    assert!(
        subset.tests.iter().all(|t| !t.nodeid.contains("label")),
        "unrelated tests ran: {:#?}",
        subset.tests
    );
    assert_eq!(subset.summary.passed, 1, "{:#?}", subset.tests);
}

#[tokio::test]
async fn a_changed_doctest_file_is_a_test_and_other_prose_is_not() {
    require_pytest();
    require_tool("git");
    let project = fixture("pytest-doctests");
    let root = project.path();
    git_commit_all(root);
    let rst = root.join("docs/prices.rst");
    let text = std::fs::read_to_string(&rst).unwrap();
    std::fs::write(&rst, text.replace("   6\n", "   7\n")).unwrap();
    let a = affected(root, FW, None).await.expect("affected");
    let AffectedPlan::Subset { selection, .. } = a.plan else {
        panic!("expected a subset: {:?}", a.plan)
    };
    assert_eq!(selection, Selection::Paths(vec!["docs/prices.rst".into()]));
    let report = run(root, selection).await;
    assert_eq!(failures(&report), ["docs/prices.rst::prices.rst"]);
    assert_eq!(report.summary.total, 1, "{:#?}", report.tests);
    assert_eq!(outcome(&report, "prices.rst"), Outcome::Failed);

    git(root, &["checkout", "--", "docs/prices.rst"]);
    // README.rst matches the doctest glob but lies outside testpaths: pytest never runs it.
    std::fs::write(root.join("README.rst"), ">>> 1 + 1\n3\n").unwrap();
    let a = affected(root, FW, None).await.expect("affected");
    assert!(
        matches!(a.plan, AffectedPlan::Nothing { .. }),
        "{:?}",
        a.plan
    );
}
