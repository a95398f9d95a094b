//! pytest through the runner layer: real pytest on tests/fixtures/pytest, via huddle's own
//! reporter plugin (the default), JUnit XML (no plugin) and pytest-json-report, with every
//! count and per-test outcome checked.

use crate::common::*;
use huddle_runners::run::{failed_selection, FailedSelection};
use huddle_runners::rundir::default_runs_dir;
use huddle_runners::{
    list_tests, run_tests, Framework, Outcome, PluginPolicy, RunOptions, Selection,
};

const EXPECTED: &[(&str, Outcome)] = &[
    ("tests/test_broken.py", Outcome::Error),
    ("tests/test_calc.py::test_adds", Outcome::Passed),
    (
        "::test_multiplies_with_a_wrong_expectation",
        Outcome::Failed,
    ),
    ("::test_divides_by_zero_and_raises", Outcome::Failed),
    ("::test_not_ready", Outcome::Skipped),
    ("::test_add_table[1-1-2]", Outcome::Passed),
    ("::test_add_table[2-2-4]", Outcome::Passed),
    ("::test_add_table[2-3-6]", Outcome::Failed),
    (
        "tests/test_calc.py::TestOuter::TestInner::test_works_when_nested",
        Outcome::Passed,
    ),
    ("::test_héllo_wörld", Outcome::Passed),
    ("::test_uses_a_broken_fixture", Outcome::Error),
    ("::test_slow_when_fixture_slow_is_set", Outcome::Passed),
    ("tests/test_strings.py::test_shout", Outcome::Passed),
    ("tests/test_strings.py::test_whisper", Outcome::Passed),
];

async fn run_with(plugins: PluginPolicy, runner_file: &str) {
    require_pytest();
    let project = fixture("pytest");
    let opts = RunOptions { plugins, ..opts() };
    let outcome = run_tests(project.path(), Framework::Pytest, &opts)
        .await
        .expect("pytest runs");
    let report = &outcome.report;
    assert_eq!(
        counts(report),
        (8, 3, 2, 1, 14),
        "summary: {:?}",
        report.summary
    );
    assert_outcomes(report, EXPECTED);
    assert_eq!(report.exitcode, 1);
    assert!(
        longrepr(report, "::test_multiplies_with_a_wrong_expectation").contains("assert 6 == 7")
    );
    assert!(longrepr(report, "::test_divides_by_zero_and_raises").contains("ZeroDivisionError"));
    assert!(longrepr(report, "tests/test_broken.py").contains("does_not_exist"));
    assert!(longrepr(report, "::test_uses_a_broken_fixture").contains("fixture exploded"));
    let adds = report
        .tests
        .iter()
        .find(|t| t.nodeid.ends_with("::test_adds"))
        .unwrap();
    assert_eq!(adds.file.as_deref(), Some("tests/test_calc.py"));
    assert_eq!(adds.lineno, Some(16), "1-based line of `def test_adds`");
    for file in [
        "report.json",
        "junit.xml",
        "stdout.txt",
        "stderr.txt",
        runner_file,
    ] {
        assert!(
            outcome.run_dir.join(file).is_file(),
            "{file} in the run directory"
        );
    }
}

#[tokio::test]
async fn pytest_by_default_reads_huddles_reporter() {
    run_with(PluginPolicy::Auto, "pytest-huddle.json").await;
}

#[tokio::test]
async fn pytest_without_plugins_reads_junit_xml() {
    run_with(PluginPolicy::Never, "pytest-junit.xml").await;
}

#[tokio::test]
async fn pytest_with_pytest_json_report_gives_the_same_report() {
    run_with(PluginPolicy::Require, "pytest-report.json").await;
}

/// A project whose own conftest unregisters huddle's reporter: pytest runs and exits 0, but
/// no report is written — the run is an error naming the reporter, never "0 tests, passed".
#[tokio::test]
async fn pytest_reporter_that_does_not_report_is_an_error() {
    require_pytest();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("pytest.ini"), "[pytest]\n").unwrap();
    std::fs::write(
        project.path().join("conftest.py"),
        "def pytest_configure(config):\n    \
         config.pluginmanager.unregister(name=\"huddle_pytest_report\")\n",
    )
    .unwrap();
    std::fs::write(
        project.path().join("test_one.py"),
        "def test_one():\n    assert True\n",
    )
    .unwrap();
    let run = run_tests(project.path(), Framework::Pytest, &opts())
        .await
        .expect("pytest runs");
    let report = &run.report;
    assert_eq!(counts(report), (0, 0, 1, 0, 1), "{:#?}", report.tests);
    let why = longrepr(report, "[runner]");
    assert!(why.contains("huddle's reporter plugin"), "{why}");
    assert!(why.contains("--plugins never"), "{why}");
    // The JUnit path still reads the same project.
    let opts = RunOptions {
        plugins: PluginPolicy::Never,
        ..opts()
    };
    let junit = run_tests(project.path(), Framework::Pytest, &opts)
        .await
        .expect("pytest runs")
        .report;
    assert_eq!(counts(&junit), (1, 0, 0, 0, 1), "{:#?}", junit.tests);
}

/// A conftest that cannot be imported stops pytest before its session (exit 4): no report,
/// and the run says why with pytest's own output.
#[tokio::test]
async fn pytest_stopped_before_its_session_is_an_error() {
    require_pytest();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("pytest.ini"), "[pytest]\n").unwrap();
    std::fs::write(
        project.path().join("conftest.py"),
        "import does_not_exist_42\n",
    )
    .unwrap();
    std::fs::write(
        project.path().join("test_one.py"),
        "def test_one():\n    assert True\n",
    )
    .unwrap();
    let report = run_tests(project.path(), Framework::Pytest, &opts())
        .await
        .expect("pytest runs")
        .report;
    assert_eq!(counts(&report), (0, 0, 1, 0, 1), "{:#?}", report.tests);
    let why = longrepr(&report, "[runner]");
    assert!(why.contains("exited with code 4"), "{why}");
    assert!(why.contains("does_not_exist_42"), "{why}");
}

#[tokio::test]
async fn pytest_filter_maps_to_k() {
    require_pytest();
    let project = fixture("pytest");
    let opts = RunOptions {
        filter: Some("add_table or shout".into()),
        ..opts()
    };
    let report = run_tests(project.path(), Framework::Pytest, &opts)
        .await
        .expect("pytest runs")
        .report;
    // The collection error of tests/test_broken.py is still reported: it is not a test name.
    assert_eq!(counts(&report), (3, 1, 1, 0, 5), "{:?}", report.tests);
    assert_eq!(outcome(&report, "::test_add_table[2-3-6]"), Outcome::Failed);
}

#[tokio::test]
async fn pytest_failed_reruns_only_what_failed() {
    require_pytest();
    let project = fixture("pytest");
    run_tests(project.path(), Framework::Pytest, &opts())
        .await
        .expect("first run");
    let runs = default_runs_dir(&project.path().canonicalize().unwrap());
    let FailedSelection::Tests(ids) = failed_selection(&runs, Framework::Pytest).expect("last run")
    else {
        panic!("expected failed tests to re-run");
    };
    assert_eq!(ids.len(), 5, "{ids:?}");
    let opts = RunOptions {
        selection: Selection::Tests(ids),
        ..opts()
    };
    let report = run_tests(project.path(), Framework::Pytest, &opts)
        .await
        .expect("re-run")
        .report;
    assert_eq!(counts(&report), (0, 3, 2, 0, 5), "{:?}", report.tests);
}

#[tokio::test]
async fn pytest_lists_tests_without_running_them() {
    require_pytest();
    let project = fixture("pytest");
    let listing = list_tests(project.path(), Framework::Pytest, &opts())
        .await
        .expect("pytest lists");
    assert_eq!(listing.tests.len(), 13, "{:?}", listing.tests);
    assert!(listing
        .tests
        .contains(&"tests/test_calc.py::TestOuter::TestInner::test_works_when_nested".to_string()));
    assert_eq!(
        listing.errors,
        ["tests/test_broken.py"],
        "the collection error is named"
    );
    assert!(
        !project.path().join(".huddle").exists(),
        "listing writes no run"
    );
}

#[tokio::test]
async fn the_interpreter_probe_is_cached_until_what_it_read_changes() {
    require_pytest();
    let project = fixture("pytest");
    let run = |opts: RunOptions| {
        let dir = project.path().to_path_buf();
        async move { run_tests(&dir, Framework::Pytest, &opts).await }
    };
    run(opts()).await.expect("first run probes");
    let cache_file = project.path().join(".huddle/runs/.python-probe.json");
    let mut cache: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&cache_file).unwrap()).unwrap();
    let entry = cache.as_array_mut().unwrap().last_mut().unwrap();
    assert_eq!(entry["python"]["pytest"], true, "{entry}");
    // Point the answer at a missing interpreter while every stamp still holds: it is reused.
    entry["python"]["executable"] = "/nonexistent/huddle/python".into();
    std::fs::write(&cache_file, cache.to_string()).unwrap();
    let err = run(opts()).await.expect_err("the cached answer is used");
    assert!(
        err.to_string().contains("/nonexistent/huddle/python"),
        "{err}"
    );
    // Once a stamp no longer holds, the interpreter is probed again.
    let entry = cache.as_array_mut().unwrap().last_mut().unwrap();
    entry["stamps"][0][1] = 1.into();
    std::fs::write(&cache_file, cache.to_string()).unwrap();
    run(opts()).await.expect("a stale answer is probed again");
}

/// What tests/fixtures/pytest-verbose holds, as pytest prints its ids: `addopts = -v` and
/// parametrized ids with spaces, from values and from `ids=`; the `slow` test is deselected by
/// the `-m "not slow"` in addopts.
const VERBOSE_IDS: &[&str] = &[
    "tests/test_known_bugs.py::test_slug_strips_accents",
    "tests/test_known_bugs.py::test_slug_of_one_word",
    "tests/test_known_bugs.py::test_slug_keeps_tabs",
    "tests/test_text.py::test_title[hello world-Hello World]",
    "tests/test_text.py::test_title[already Title-Already Title]",
    "tests/test_text.py::test_slug[two words]",
    "tests/test_text.py::test_slug[padded on both sides]",
    "tests/test_text.py::test_slug[runs of spaces]",
    "tests/test_text.py::test_slug_transliterates",
];

#[tokio::test]
async fn pytest_lists_ids_with_spaces_under_verbose_addopts() {
    require_pytest();
    let project = fixture("pytest-verbose");
    let listing = list_tests(project.path(), Framework::Pytest, &opts())
        .await
        .expect("pytest lists");
    assert_eq!(listing.tests, VERBOSE_IDS);
    assert!(listing.errors.is_empty(), "{:?}", listing.errors);
    // The listing names exactly what a run reports. pytest's summary line says "2 failed,
    // 4 passed, 1 skipped, 1 deselected, 1 xfailed, 1 xpassed": the xfailed test is skipped,
    // the xpassed one passed, the strict xpass is one of the failures; deselected tests are
    // in no report. Both of pytest's machine-readable outputs agree.
    for plugins in [
        PluginPolicy::Auto,
        PluginPolicy::Never,
        PluginPolicy::Require,
    ] {
        let opts = RunOptions { plugins, ..opts() };
        let report = run_tests(project.path(), Framework::Pytest, &opts)
            .await
            .expect("pytest runs")
            .report;
        assert_eq!(
            counts(&report),
            (5, 2, 0, 2, 9),
            "{plugins:?}: {:?}",
            report.tests
        );
        let mut ran: Vec<&str> = report.tests.iter().map(|t| t.nodeid.as_str()).collect();
        ran.sort_unstable();
        let mut listed = VERBOSE_IDS.to_vec();
        listed.sort_unstable();
        assert_eq!(ran, listed);
        for (suffix, want) in [
            ("::test_slug[runs of spaces]", Outcome::Failed),
            ("::test_slug_strips_accents", Outcome::Skipped),
            ("::test_slug_of_one_word", Outcome::Passed),
            ("::test_slug_keeps_tabs", Outcome::Failed),
        ] {
            assert_eq!(outcome(&report, suffix), want, "{plugins:?}: {suffix}");
        }
    }
    // A filter narrows the listing the way it narrows a run.
    let filtered = RunOptions {
        filter: Some("slug and spaces".into()),
        ..opts()
    };
    let listing = list_tests(project.path(), Framework::Pytest, &filtered)
        .await
        .expect("pytest lists");
    assert_eq!(
        listing.tests,
        ["tests/test_text.py::test_slug[runs of spaces]"]
    );
}

#[tokio::test]
async fn pytest_listing_names_a_usage_error_instead_of_listing_nothing() {
    require_pytest();
    let project = fixture("pytest-verbose");
    let bad = RunOptions {
        filter: Some("not (".into()),
        ..opts()
    };
    let listing = list_tests(project.path(), Framework::Pytest, &bad)
        .await
        .expect("pytest runs");
    assert!(listing.tests.is_empty(), "{:?}", listing.tests);
    assert_eq!(listing.errors.len(), 1, "{:?}", listing.errors);
    assert!(
        listing.errors[0].starts_with("pytest exited with code 4 while collecting")
            && listing.errors[0].contains("Wrong expression passed to '-k'"),
        "{}",
        listing.errors[0]
    );
}
