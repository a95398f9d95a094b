//! cargo through the runner layer: real `cargo nextest run` (JUnit, plus `cargo test --doc`
//! for the doc tests) and real `cargo test` (libtest lines) on tests/fixtures/cargo, which
//! must give the same report, with the counts `cargo test` itself prints; plus a build
//! failure, the filter, `--failed` (doc tests included) and listing.

use crate::common::*;
use huddle_runners::run::{failed_selection, FailedSelection};
use huddle_runners::rundir::default_runs_dir;
use huddle_runners::{
    list_tests, run_tests, Framework, Outcome, PluginPolicy, RunOptions, Selection,
};
use std::path::Path;

const FW: Framework = Framework::Cargo;

const DOC: &str = "doc-tests/huddle_fixture_cargo::";

/// Unit, integration and doc tests, as `cargo test` counts them (nextest runs the first two;
/// huddle adds `cargo test --doc` beside it).
const EXPECTED: &[(&str, Outcome)] = &[
    ("src/lib.rs::tests::adds_two_numbers", Outcome::Passed),
    (
        "src/lib.rs::tests::multiplies_with_a_wrong_expectation",
        Outcome::Failed,
    ),
    (
        "src/lib.rs::tests::divides_by_zero_and_panics",
        Outcome::Failed,
    ),
    ("src/lib.rs::tests::not_ready", Outcome::Skipped),
    ("src/lib.rs::tests::add_table_1_1", Outcome::Passed),
    ("src/lib.rs::tests::add_table_2_2", Outcome::Passed),
    ("src/lib.rs::tests::add_table_2_3", Outcome::Failed),
    (
        "src/lib.rs::tests::outer::inner::works_when_nested",
        Outcome::Passed,
    ),
    ("src/lib.rs::tests::héllo_wörld", Outcome::Passed),
    (
        "src/lib.rs::tests::slow_when_fixture_slow_is_set",
        Outcome::Passed,
    ),
    (
        "src/lib.rs::text::tests::whisper_lower_cases_and_trails_off",
        Outcome::Passed,
    ),
    (
        "tests/strings.rs::shout_upper_cases_and_adds_a_bang",
        Outcome::Passed,
    ),
    ("tests/strings.rs::shout_keeps_unicode", Outcome::Passed),
    ("::src/lib.rs - add (line 11)", Outcome::Passed),
    ("::src/lib.rs - multiply (line 20)", Outcome::Skipped),
    ("::src/lib.rs - divide (line 32)", Outcome::Failed),
    ("::src/text.rs - text::shout (line 6)", Outcome::Passed),
];

/// (passed, failed, ignored) summed over the `test result:` lines of a real `cargo test`:
/// the framework's own count.
pub(crate) fn counts_from_cargo_test(project: &std::path::Path) -> (usize, usize, usize) {
    counts_from_cargo_test_with(project, &[])
}

/// [`counts_from_cargo_test`] for `cargo test <args>` (`-p a`, a filter after `--`).
pub(crate) fn counts_from_cargo_test_with(
    project: &std::path::Path,
    args: &[&str],
) -> (usize, usize, usize) {
    let (key, dir) = own_target(project);
    let out = std::process::Command::new("cargo")
        .args(["test", "--no-fail-fast", "--quiet"])
        .args(args)
        .env(key, dir)
        .current_dir(project)
        .output()
        .expect("cargo test runs");
    let mut counts = (0, 0, 0);
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some(rest) = line.strip_prefix("test result: ") else {
            continue;
        };
        // `FAILED. 7 passed; 3 failed; 1 ignored; 0 measured; 0 filtered out; …`
        let number = |what: &str| -> usize {
            rest.split("; ")
                .find_map(|part| part.rsplit(". ").next()?.strip_suffix(what)?.parse().ok())
                .unwrap_or_else(|| panic!("no {what:?} in {line:?}"))
        };
        counts.0 += number(" passed");
        counts.1 += number(" failed");
        counts.2 += number(" ignored");
    }
    counts
}

/// Each copy builds into its own target directory: copies of one crate get the same artifact
/// names, so with a shared `CARGO_TARGET_DIR` one test's build rewrites the library another
/// test's doc tests are linking against.
pub(crate) fn own_target(project: &Path) -> (String, String) {
    let dir = project.join("target");
    ("CARGO_TARGET_DIR".into(), dir.display().to_string())
}

fn with(plugins: PluginPolicy, project: &Path) -> RunOptions {
    RunOptions {
        plugins,
        env: vec![own_target(project)],
        ..opts()
    }
}

async fn full_run(plugins: PluginPolicy) {
    require_tool("cargo");
    let project = fixture("cargo");
    let outcome = run_tests(project.path(), FW, &with(plugins, project.path()))
        .await
        .expect("cargo runs");
    let report = &outcome.report;
    assert_eq!(
        counts(report),
        (11, 4, 0, 2, 17),
        "summary: {:?}",
        report.summary
    );
    assert_outcomes(report, EXPECTED);
    let s = report.summary;
    assert_eq!(
        counts_from_cargo_test(project.path()),
        (s.passed, s.failed, s.skipped),
        "the same counts as cargo test's own summary lines"
    );
    // cargo test's exit code for failing tests, or nextest's ("test run failed").
    let failing_exit = if plugins == PluginPolicy::Never {
        101
    } else {
        100
    };
    assert_eq!(report.exitcode, failing_exit);
    assert!(longrepr(report, "::multiplies_with_a_wrong_expectation").contains("right: 7"));
    assert!(longrepr(report, "::divides_by_zero_and_panics").contains("division by zero"));
    assert!(longrepr(report, "divide (line 32)").contains("right: Ok(4)"));
    let file_line = |suffix: &str| {
        let t = report
            .tests
            .iter()
            .find(|t| t.nodeid.ends_with(suffix))
            .unwrap();
        (t.file.clone(), t.lineno)
    };
    assert_eq!(
        file_line("::multiplies_with_a_wrong_expectation"),
        (Some("src/lib.rs".into()), Some(53))
    );
    // A unit test in a module file points at that file, not at the crate root (nor at
    // build.rs, which nextest's binary id used to resolve to).
    assert_eq!(
        file_line("::whisper_lower_cases_and_trails_off"),
        (Some("src/text.rs".into()), None)
    );
    // A doc test points at its example, even when it fails (its panic's line is the
    // generated program's).
    assert_eq!(
        file_line("divide (line 32)"),
        (Some("src/lib.rs".into()), Some(32))
    );
    assert!(!report
        .tests
        .iter()
        .any(|t| t.nodeid.starts_with("build.rs")));
    if plugins == PluginPolicy::Require {
        for file in ["nextest-junit.xml", "doctests-stdout.txt"] {
            assert!(
                outcome.run_dir.join(file).is_file(),
                "{file} kept with the run"
            );
        }
    }
}

#[tokio::test]
async fn cargo_test_libtest_lines_report_every_outcome() {
    full_run(PluginPolicy::Never).await;
}

#[tokio::test]
async fn cargo_nextest_junit_reports_every_outcome() {
    require_tool("cargo-nextest");
    full_run(PluginPolicy::Require).await;
}

#[tokio::test]
async fn cargo_build_failure_is_an_error_with_the_compiler_message() {
    require_tool("cargo");
    let project = fixture("cargo");
    std::fs::write(
        project.path().join("tests/broken.rs"),
        "#[test]\nfn f() { let x: u8 = \"no\"; }\n",
    )
    .unwrap();
    for plugins in [PluginPolicy::Never, PluginPolicy::Auto] {
        let report = run_tests(project.path(), FW, &with(plugins, project.path()))
            .await
            .expect("cargo runs")
            .report;
        let build = report
            .tests
            .iter()
            .find(|t| t.nodeid == "[build]")
            .expect("a [build] error");
        assert_eq!(build.outcome, Outcome::Error);
        assert!(
            build
                .longrepr
                .as_deref()
                .unwrap()
                .contains("mismatched types"),
            "{build:?}"
        );
        assert_eq!(build.file.as_deref(), Some("tests/broken.rs"));
        // The doc tests are not run (and built) again after a failed build.
        let builds = report
            .tests
            .iter()
            .filter(|t| t.nodeid == "[build]")
            .count();
        assert_eq!(builds, 1, "{plugins:?}: {:?}", report.tests);
        assert!(report.summary.error >= 1 && !report.all_passed());
    }
}

#[tokio::test]
async fn cargo_filter_and_failed_rerun() {
    require_tool("cargo");
    let project = fixture("cargo");
    let filtered = RunOptions {
        filter: Some("add_table".into()),
        ..with(PluginPolicy::Never, project.path())
    };
    let report = run_tests(project.path(), FW, &filtered)
        .await
        .expect("cargo runs")
        .report;
    assert_eq!(counts(&report), (2, 1, 0, 0, 3), "{:?}", report.tests);

    run_tests(
        project.path(),
        FW,
        &with(PluginPolicy::Never, project.path()),
    )
    .await
    .expect("full run");
    let runs = default_runs_dir(&project.path().canonicalize().unwrap());
    let FailedSelection::Tests(ids) = failed_selection(&runs, FW).expect("last run") else {
        panic!("expected failed tests to re-run");
    };
    let doc_id = format!("{DOC}src/lib.rs - divide (line 32)");
    assert_eq!(ids.len(), 4, "{ids:?}");
    assert!(ids.contains(&doc_id), "{ids:?}");
    for plugins in [PluginPolicy::Never, PluginPolicy::Auto] {
        let opts = RunOptions {
            selection: Selection::Tests(ids.clone()),
            ..with(plugins, project.path())
        };
        let report = run_tests(project.path(), FW, &opts)
            .await
            .expect("re-run")
            .report;
        assert_eq!(
            counts(&report),
            (0, 4, 0, 0, 4),
            "{plugins:?}: {:?}",
            report.tests
        );
        // The doc test alone: `cargo test --doc` filtered by its item path.
        let opts = RunOptions {
            selection: Selection::Tests(vec![doc_id.clone()]),
            ..with(plugins, project.path())
        };
        let report = run_tests(project.path(), FW, &opts)
            .await
            .expect("re-run")
            .report;
        assert_outcomes(&report, &[(doc_id.as_str(), Outcome::Failed)]);
    }
}

#[tokio::test]
async fn cargo_lists_tests_without_running_them() {
    require_tool("cargo");
    let project = fixture("cargo");
    for plugins in [PluginPolicy::Never, PluginPolicy::Auto] {
        let listing = list_tests(project.path(), FW, &with(plugins, project.path()))
            .await
            .expect("cargo lists");
        let mut tests = listing.tests.clone();
        tests.sort();
        // Unit, integration and doc tests, ignored ones included, as `cargo test -- --list`.
        assert_eq!(tests.len(), 17, "{plugins:?}: {tests:?}");
        for id in [
            "tests/strings.rs::shout_keeps_unicode",
            "src/lib.rs::tests::outer::inner::works_when_nested",
            "src/lib.rs::text::tests::whisper_lower_cases_and_trails_off",
            &format!("{DOC}src/text.rs - text::shout (line 6)"),
            &format!("{DOC}src/lib.rs - multiply (line 20)"),
        ] {
            assert!(
                tests.iter().any(|t| t == id),
                "{plugins:?}: {id} in {tests:?}"
            );
        }
    }
}
