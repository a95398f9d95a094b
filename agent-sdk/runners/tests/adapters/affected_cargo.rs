//! `--affected` on cargo follows the crate graph (tests/fixtures/cargo-workspace: ws-a ←
//! ws-b ← ws-c, and ws-d on its own). A change to ws-a that its own tests do not catch
//! breaks a test of ws-c: the affected run must select ws-c and find that failure, as the
//! full suite does, and count what `cargo test -p` on the same crates counts.

use crate::cargo::{counts_from_cargo_test_with, own_target};
use crate::common::*;
use huddle_runners::affected::{affected, AffectedPlan};
use huddle_runners::{run_tests, Framework, Outcome, Report, RunOptions, Selection};
use std::path::Path;

const FW: Framework = Framework::Cargo;

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
        env: vec![own_target(project)],
        ..opts()
    };
    run_tests(project, FW, &opts)
        .await
        .expect("cargo runs")
        .report
}

async fn plan_after_touching(project: &Path, file: &str) -> AffectedPlan {
    let path = project.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{text}\n// touched\n")).unwrap();
    let plan = affected(project, FW, None).await.expect("affected").plan;
    std::fs::write(&path, text).unwrap();
    plan
}

#[tokio::test]
async fn a_change_selects_its_crate_and_every_crate_depending_on_it() {
    require_tool("cargo");
    require_tool("git");
    let project = fixture("cargo-workspace");
    git_commit_all(project.path());
    let lib = project.path().join("crates/a/src/lib.rs");
    let broken = std::fs::read_to_string(&lib)
        .unwrap()
        .replace("x.clamp(0, 100)", "x.clamp(0, 99)");
    std::fs::write(&lib, broken).unwrap();

    let a = affected(project.path(), FW, None).await.expect("affected");
    let AffectedPlan::Subset { selection, reasons } = a.plan else {
        panic!("expected a subset: {:?}", a.plan)
    };
    assert_eq!(
        selection,
        Selection::Paths(vec![
            "crates/a".into(),
            "crates/b".into(),
            "crates/c".into()
        ])
    );
    assert_eq!(
        reasons,
        [
            "crates/a/src/lib.rs: crate ws-a (crates/a) and the crates depending on it: \
          ws-b (crates/b, depends on ws-a), ws-c (crates/c, depends on ws-b)"
        ]
    );

    let subset = run(project.path(), selection).await;
    let full = run(project.path(), Selection::All).await;
    assert_eq!(
        failures(&full),
        ["crates/c/tests/overflow.rs::over_done_is_full"],
        "{:#?}",
        full.tests
    );
    assert_eq!(
        failures(&subset),
        failures(&full),
        "the affected run finds every failure"
    );
    assert!(
        !subset
            .tests
            .iter()
            .any(|t| t.nodeid.starts_with("crates/d/")),
        "ws-d does not depend on ws-a: {:#?}",
        subset.tests
    );
    // cargo's own count of the same crates.
    let own =
        counts_from_cargo_test_with(project.path(), &["-p", "ws-a", "-p", "ws-b", "-p", "ws-c"]);
    let s = subset.summary;
    assert_eq!((s.passed, s.failed, s.skipped), own);
    assert_eq!(own, (3, 1, 0));
    assert_eq!(
        outcome(
            &subset,
            "crates/a/src/lib.rs::tests::keeps_a_value_in_range"
        ),
        Outcome::Passed
    );
}

#[tokio::test]
async fn integration_tests_and_crates_nobody_depends_on_select_themselves() {
    require_tool("cargo");
    require_tool("git");
    let project = fixture("cargo-workspace");
    git_commit_all(project.path());
    for (file, want, why) in [
        (
            "crates/c/tests/overflow.rs",
            "crates/c",
            "crates/c/tests/overflow.rs: crate ws-c (crates/c)",
        ),
        (
            "crates/c/src/lib.rs",
            "crates/c",
            "crates/c/src/lib.rs: crate ws-c (crates/c)",
        ),
        (
            "crates/a/src/lib.rs",
            "crates/a",
            "crates/a/src/lib.rs: crate ws-a (crates/a) and",
        ),
    ] {
        let plan = plan_after_touching(project.path(), file).await;
        let AffectedPlan::Subset { selection, reasons } = plan else {
            panic!("{file}: expected a subset: {plan:?}")
        };
        let Selection::Paths(paths) = selection else {
            panic!("{file}: {selection:?}")
        };
        assert_eq!(paths[0], want, "{file}");
        assert!(reasons[0].starts_with(why), "{file}: {reasons:?}");
    }
    // A file of no workspace crate: the full suite, saying why.
    std::fs::create_dir_all(project.path().join("scripts")).unwrap();
    std::fs::write(project.path().join("scripts/gen.rs"), "fn main() {}\n").unwrap();
    let plan = affected(project.path(), FW, None)
        .await
        .expect("affected")
        .plan;
    let AffectedPlan::Full { reason } = plan else {
        panic!("expected the full suite: {plan:?}")
    };
    assert!(
        reason.contains("scripts/gen.rs is in no crate of the workspace"),
        "{reason}"
    );
}

/// A root package depending on a member (as thiserror on thiserror-impl): a change in the
/// member selects the root package too, as `.`, and its tests run.
#[tokio::test]
async fn a_root_package_depending_on_a_member_is_selected_as_dot() {
    require_tool("cargo");
    require_tool("git");
    let project = tempfile::tempdir().unwrap();
    let root = project.path();
    let write = |file: &str, text: &str| {
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "Cargo.toml",
        "[package]\nname = \"top\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [dependencies]\nbase = { path = \"base\" }\n\n[workspace]\nmembers = [\"base\"]\n",
    );
    write(
        "src/lib.rs",
        "pub fn twice() -> u8 { base::one() * 2 }\n\n\
         #[test]\nfn twice_is_two() { assert_eq!(twice(), 2); }\n",
    );
    write(
        "base/Cargo.toml",
        "[package]\nname = \"base\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    write("base/src/lib.rs", "pub fn one() -> u8 { 1 }\n");
    git_commit_all(root);
    write("base/src/lib.rs", "pub fn one() -> u8 { 2 }\n");
    let a = affected(root, FW, None).await.expect("affected");
    let AffectedPlan::Subset { selection, reasons } = a.plan else {
        panic!("expected a subset: {:?}", a.plan)
    };
    assert_eq!(selection, Selection::Paths(vec!["base".into(), ".".into()]));
    assert_eq!(
        reasons,
        [
            "base/src/lib.rs: crate base (base) and the crates depending on it: \
          top (., depends on base)"
        ]
    );
    let report = run(root, selection).await;
    assert_eq!(failures(&report), ["src/lib.rs::twice_is_two"]);
}
