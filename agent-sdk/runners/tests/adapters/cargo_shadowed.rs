//! cargo on tests/fixtures/cargo-shadowed: a workspace member `itoa` beside a member that
//! depends on another package named `itoa`, so `--package itoa` is ambiguous to cargo. Every package
//! huddle names goes by its package id spec: the member's doc tests (one of them failing) are
//! run and listed, under nextest and under `cargo test`, with `cargo test`'s own counts. The
//! member is edition 2024: its doc tests print two blocks (merged, then standalone) under one
//! `Doc-tests itoa` line, and both belong to it, in runs and listings.

use crate::cargo::{counts_from_cargo_test, own_target};
use crate::common::*;
use huddle_runners::{
    list_tests, run_tests, Framework, Outcome, PluginPolicy, RunOptions, Selection,
};

const FW: Framework = Framework::Cargo;

const EXPECTED: &[(&str, Outcome)] = &[
    ("itoa/src/lib.rs::tests::formats_zero", Outcome::Passed),
    ("app/src/lib.rs::tests::renders", Outcome::Passed),
    (
        "doc-tests/itoa::itoa/src/lib.rs - (line 3)",
        Outcome::Passed,
    ),
    (
        "doc-tests/itoa::itoa/src/lib.rs - format (line 9)",
        Outcome::Passed,
    ),
    (
        "doc-tests/itoa::itoa/src/lib.rs - format (line 15)",
        Outcome::Failed,
    ),
    (
        "doc-tests/itoa::itoa/src/lib.rs - twice (line 33)",
        Outcome::Passed,
    ),
    ("doc-tests/app::app/src/lib.rs - (line 3)", Outcome::Passed),
];

fn with(plugins: PluginPolicy, project: &std::path::Path) -> RunOptions {
    RunOptions {
        plugins,
        env: vec![own_target(project)],
        ..opts()
    }
}

#[tokio::test]
async fn a_member_named_like_a_registry_crate_keeps_its_doc_tests() {
    require_tool("cargo");
    require_tool("cargo-nextest");
    let project = fixture("cargo-shadowed");
    let own = counts_from_cargo_test(project.path());
    assert_eq!(own, (6, 1, 0), "cargo test's own counts");
    for plugins in [PluginPolicy::Require, PluginPolicy::Never] {
        let report = run_tests(project.path(), FW, &with(plugins, project.path()))
            .await
            .expect("cargo runs")
            .report;
        assert_outcomes(&report, EXPECTED);
        assert_eq!(counts(&report), (6, 1, 0, 0, 7), "{plugins:?}");
        let listed = list_tests(project.path(), FW, &with(plugins, project.path()))
            .await
            .expect("lists");
        assert_eq!(
            sorted(listed.tests),
            test_ids(&report),
            "{plugins:?} listing"
        );
    }
}

#[tokio::test]
async fn the_members_directory_selects_it_by_its_package_id() {
    require_tool("cargo");
    let project = fixture("cargo-shadowed");
    let opts = RunOptions {
        selection: Selection::Paths(vec!["itoa".into()]),
        ..with(PluginPolicy::Never, project.path())
    };
    let report = run_tests(project.path(), FW, &opts)
        .await
        .expect("cargo runs")
        .report;
    assert_eq!(counts(&report), (4, 1, 0, 0, 5), "{:#?}", report.tests);
    assert!(
        report
            .command
            .iter()
            .any(|a| a.contains("#") && a.contains("itoa")),
        "{:?}",
        report.command
    );
}
