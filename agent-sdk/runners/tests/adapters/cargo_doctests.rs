//! Doc tests of every kind on tests/fixtures/cargo-doctests (plain, `no_run`,
//! `compile_fail`, `should_panic`, `ignore`, a module's, and the README's, included with
//! `#![doc = include_str!("../README.md")]`): a run counts what `cargo test` counts, `--list`
//! names what `cargo test -- --list` names with the run's ids, and a filter runs what
//! `cargo test NAME` runs, which leaves doc tests out.

use crate::cargo::{counts_from_cargo_test_with, own_target};
use crate::common::*;
use huddle_runners::{list_tests, run_tests, Framework, PluginPolicy, RunOptions};
use std::path::Path;

const FW: Framework = Framework::Cargo;

fn with(plugins: PluginPolicy, project: &Path, filter: Option<&str>) -> RunOptions {
    RunOptions {
        plugins,
        filter: filter.map(str::to_string),
        env: vec![own_target(project)],
        ..opts()
    }
}

/// The names `cargo test -- --list` prints (unit and doc tests alike).
fn cargo_list(project: &Path) -> usize {
    let (key, dir) = own_target(project);
    let out = std::process::Command::new("cargo")
        .args(["test", "--quiet", "--", "--list"])
        .env(key, dir)
        .current_dir(project)
        .output()
        .expect("cargo test -- --list runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.ends_with(": test"))
        .count()
}

#[tokio::test]
async fn every_kind_of_doc_test_counts_and_lists_with_the_runs_ids() {
    require_tool("cargo");
    let project = fixture("cargo-doctests");
    let own = counts_from_cargo_test_with(project.path(), &[]);
    assert_eq!(own, (8, 2, 1), "cargo test's own count");
    let listed_by_cargo = cargo_list(project.path());
    assert_eq!(listed_by_cargo, 11);
    for plugins in [PluginPolicy::Never, PluginPolicy::Auto] {
        let report = run_tests(project.path(), FW, &with(plugins, project.path(), None))
            .await
            .expect("cargo runs")
            .report;
        let s = report.summary;
        assert_eq!(
            (s.passed, s.failed, s.skipped),
            own,
            "{plugins:?}: {:#?}",
            report.tests
        );
        assert_eq!(s.error, 0, "{plugins:?}");
        let listing = list_tests(project.path(), FW, &with(plugins, project.path(), None))
            .await
            .expect("cargo lists");
        assert_eq!(listing.tests.len(), listed_by_cargo, "{plugins:?}");
        assert_eq!(sorted(listing.tests), test_ids(&report), "{plugins:?}");
    }
    // The README's blocks are the crate's doc tests, named by the file that includes it.
    let report = run_tests(
        project.path(),
        FW,
        &with(PluginPolicy::Never, project.path(), None),
    )
    .await
    .expect("cargo runs")
    .report;
    let doc = "doc-tests/huddle_fixture_cargo_doctests::src/lib.rs - ";
    assert!(longrepr(&report, &format!("{doc}(line 18)")).contains("70000"));
    assert_eq!(
        outcome(&report, &format!("{doc}parse_port (line 22)")),
        huddle_runners::Outcome::Passed,
        "a compile_fail example's id carries no mode"
    );
}

#[tokio::test]
async fn a_filter_runs_what_cargo_test_name_runs() {
    require_tool("cargo");
    let project = fixture("cargo-doctests");
    // `port` and `kib` name doc tests as well as unit tests; `cargo test NAME` runs none of
    // the doc tests.
    for filter in ["port", "kib", "parse"] {
        let own = counts_from_cargo_test_with(project.path(), &[filter]);
        for plugins in [PluginPolicy::Never, PluginPolicy::Auto] {
            let report = run_tests(
                project.path(),
                FW,
                &with(plugins, project.path(), Some(filter)),
            )
            .await
            .expect("cargo runs")
            .report;
            let s = report.summary;
            assert_eq!(
                (s.passed, s.failed, s.skipped),
                own,
                "{filter} {plugins:?}: {:#?}",
                report.tests
            );
            assert!(
                !report
                    .tests
                    .iter()
                    .any(|t| t.nodeid.starts_with("doc-tests/")),
                "{filter} {plugins:?}"
            );
            let listing = list_tests(
                project.path(),
                FW,
                &with(plugins, project.path(), Some(filter)),
            )
            .await
            .expect("cargo lists");
            assert_eq!(
                sorted(listing.tests),
                test_ids(&report),
                "{filter} {plugins:?}"
            );
        }
    }
}

/// `src/lib.rs` beside `doc-tests` (the tiers' unit tier): the library's own tests and its
/// doc tests, as `cargo test --lib` plus `cargo test --doc` count them; `doc-tests` alone:
/// only the doc tests.
#[tokio::test]
async fn the_doc_tests_path_adds_the_librarys_doc_tests_to_a_lib_run() {
    use huddle_runners::adapters::cargo_doc::DOC_TESTS_PATH;
    use huddle_runners::Selection;
    require_tool("cargo");
    let project = fixture("cargo-doctests");
    let lib = counts_from_cargo_test_with(project.path(), &["--lib"]);
    let doc = counts_from_cargo_test_with(project.path(), &["--doc"]);
    assert!(doc.0 > 0 && lib.0 > 0, "both kinds exist: {lib:?} {doc:?}");
    let both = (lib.0 + doc.0, lib.1 + doc.1, lib.2 + doc.2);
    for plugins in [PluginPolicy::Never, PluginPolicy::Auto] {
        for (paths, want) in [
            (vec!["src/lib.rs", DOC_TESTS_PATH], both),
            (vec![DOC_TESTS_PATH], doc),
            (vec!["src/lib.rs"], lib),
        ] {
            let opts = RunOptions {
                selection: Selection::Paths(paths.iter().map(|p| p.to_string()).collect()),
                ..with(plugins, project.path(), None)
            };
            let report = run_tests(project.path(), FW, &opts)
                .await
                .expect("cargo runs")
                .report;
            let s = report.summary;
            assert_eq!(
                (s.passed, s.failed, s.skipped),
                want,
                "{paths:?} {plugins:?}: {:#?}",
                report.tests
            );
        }
    }
}
